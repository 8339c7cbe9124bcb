import { DEBUG_FLAG, type FlagSpec, type FlagValues, parseFlags, type ParseOutcome, type ProgramDescription } from "../cli/flags.ts";
import { type ListenAddress, parseListenAddress } from "../cli/listen-address.ts";
import type { LatencyModel } from "../model/latency.ts";
import { DEFAULT_LATENCY_MODEL } from "../model/latency.ts";

/**
 * Node's own headers timeout is off when the request timeout is (requests here may stay in
 * service for hours), so the server sets one itself: without it, connections that never
 * finish their request head (slowloris) would hold descriptors for ever.
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

/** Flags, defaults and help of ./server, in one table. The first three keep the reference's Go names. */
export const SERVER_FLAGS = [
  {
    name: "limit",
    kind: "integer",
    default: DEFAULT_LATENCY_MODEL.limit,
    min: 0,
    placeholder: "n",
    description: "limit on concurrency: requests in service before the delay grows",
  },
  {
    name: "factor",
    kind: "number",
    default: DEFAULT_LATENCY_MODEL.factor,
    min: 1,
    placeholder: "f",
    description: "factor of increasing delay: delay = baseDelay * factor^((concurrency - limit) / k)",
  },
  {
    name: "baseDelay",
    kind: "duration",
    default: DEFAULT_LATENCY_MODEL.baseDelayMs,
    minMs: 0,
    description: "base service delay, at or below the limit",
  },
  {
    name: "k",
    kind: "number",
    default: DEFAULT_LATENCY_MODEL.exponentDivisor,
    min: 0,
    minExclusive: true,
    placeholder: "n",
    description: "divisor K of the exponent (15 in the reference server)",
  },
  {
    name: "listen",
    kind: "string",
    default: "127.0.0.1:8070",
    placeholder: "host:port",
    description: "address to listen on; ':8070' for all interfaces, port 0 for any free port",
    check: (value) => {
      const parsed = parseListenAddress(value);
      return typeof parsed === "string" ? parsed : undefined;
    },
  },
  {
    name: "backlog",
    kind: "integer",
    default: 4096,
    min: 1,
    placeholder: "n",
    description: "listen backlog: connections the kernel queues while the server is stopped (capped by net.core.somaxconn)",
  },
  {
    name: "cancel-on-disconnect",
    kind: "boolean",
    default: false,
    description: "take a request out of service when its client goes away (the reference keeps it)",
  },
  {
    name: "max-concurrency",
    kind: "integer",
    default: 0,
    min: 0,
    placeholder: "n",
    description: "load shedding: answer 503 at once above this many requests in service (0 = off)",
  },
  {
    name: "report-interval",
    kind: "duration",
    default: 1000,
    minMs: 0,
    minExclusive: true,
    description: "how often to print the concurrency line",
  },
  {
    name: "headers-timeout",
    kind: "duration",
    default: DEFAULT_HEADERS_TIMEOUT_MS,
    minMs: 0,
    description: "close a connection that has not sent a complete request head within this time, with 408 (0 = never)",
  },
  { name: "json", kind: "boolean", default: false, description: "print one JSON object per report instead of the text line" },
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

export const SERVER_PROGRAM: ProgramDescription<typeof SERVER_FLAGS> = {
  name: "server",
  summary:
    "An HTTP server whose latency is baseDelay up to a concurrency limit and grows exponentially above it.\n" +
    "GET /api answers OK after the modelled delay; GET /stats gives a JSON snapshot.",
  flags: SERVER_FLAGS,
};

export interface ServerOptions {
  readonly latency: LatencyModel;
  readonly listen: ListenAddress;
  readonly backlog: number;
  readonly cancelOnDisconnect: boolean;
  /** Infinity when load shedding is off. */
  readonly maxConcurrency: number;
  readonly reportIntervalMs: number;
  /** 0 turns it off. */
  readonly headersTimeoutMs: number;
  readonly json: boolean;
}

export function resolveServerOptions(values: FlagValues<typeof SERVER_FLAGS>): ServerOptions {
  const listen = parseListenAddress(values.listen);
  if (typeof listen === "string") throw new Error(`unreachable: -listen was checked (${listen})`);
  return {
    latency: {
      baseDelayMs: values.baseDelay,
      limit: values.limit,
      factor: values.factor,
      exponentDivisor: values.k,
    },
    listen,
    backlog: values.backlog,
    cancelOnDisconnect: values["cancel-on-disconnect"],
    maxConcurrency: values["max-concurrency"] === 0 ? Infinity : values["max-concurrency"],
    reportIntervalMs: values["report-interval"],
    headersTimeoutMs: values["headers-timeout"],
    json: values.json,
  };
}

export function parseServerArgs(args: readonly string[]): ParseOutcome<typeof SERVER_FLAGS> {
  return parseFlags(SERVER_PROGRAM, args);
}
