import { formatDuration } from "../cli/duration.ts";
import type { FlagSpec } from "../cli/flags.ts";
import { checkUrl } from "../cli/url.ts";
import { isLoopback } from "../cli/loopback.ts";
import { FatalError, UsageError } from "../cli/usage-error.ts";
import type { Fault } from "../model/faults/fault-schedule.ts";
import { FAULT_KIND_DEFINITIONS, faultKind } from "../model/faults/kinds.ts";
import { percentile } from "../model/percentile.ts";
import { type Baseline, baselineBoundMs, timeToBaseline } from "./back-to-baseline.ts";
import type { TargetPlan } from "./experiment.ts";
import { exchangeOnce } from "./one-request.ts";
import { type TargetControl, TargetService } from "./target-service.ts";

/** A service of the user's that the crash experiment runs on instead of ./server (the demo's, and choose -validate's). */
export const TARGET_FLAGS = [
  {
    name: "target",
    group: "run",
    kind: "string",
    default: "",
    placeholder: "url",
    description:
      "run the crash experiment on a service of yours at this URL (this machine's loopback) instead of ./server: the clients call it, " +
      "a watcher asks it once every 250 ms for the verdict, and each run starts once it is back at its baseline (docs/demo.md)",
    check: (text) => (text === "" ? undefined : checkUrl(text)),
  },
  {
    name: "target-cmd",
    group: "run",
    kind: "string",
    default: "",
    placeholder: "command",
    description:
      "with -target: start the service with this shell command, in a process group of its own; a stop is SIGSTOP and SIGCONT " +
      "of that group, a crash kills it and runs the command again",
  },
  {
    name: "target-pid",
    group: "run",
    kind: "integer",
    default: 0,
    min: 0,
    placeholder: "pid",
    description: "with -target: the service's running process; a stop is SIGSTOP and SIGCONT of its process group (no crash)",
  },
] as const satisfies readonly FlagSpec[];

/** The flags that say a target (the demo's, choose -validate's), as parsed. */
export interface TargetFlags {
  readonly target: string;
  readonly "target-cmd": string;
  readonly "target-pid": number;
}

/**
 * -target's flags checked against the run: a service on this machine's loopback, started by its
 * command or given by its pid (or neither: spikes only), one server (no chain), and only faults it
 * can play (its server flags, the scenario file's system and -server-args, are the model the
 * simulator predicts it with): a stop needs its processes, a crash its command, and capacity,
 * slow and errors need ./server's fault control. Undefined without -target.
 */
export function targetOf(values: TargetFlags, faults: readonly Fault[], isChain: boolean, faultsGiven: boolean): TargetService | undefined {
  const command = values["target-cmd"];
  const pid = values["target-pid"];
  if (values.target === "") {
    if (command !== "" || pid !== 0) throw new UsageError("-target-cmd and -target-pid go with -target URL, the service they run");
    return undefined;
  }
  const url = new URL(values.target);
  if (!isLoopback(url.hostname))
    throw new UsageError(`-target ${url.host}: the crash experiment stops and loads the service it names: only on this machine's loopback`);
  if (command !== "" && pid !== 0)
    throw new UsageError("-target-cmd or -target-pid: one says how the crash experiment acts on the service");
  if (isChain) throw new UsageError("-target runs the experiment on one service, not on a chain of tiers");
  const control: TargetControl = command !== "" ? { kind: "command", command } : pid !== 0 ? { kind: "pid", pid } : { kind: "none" };
  for (const fault of faults) refuseFault(fault, control, faultsGiven);
  return new TargetService(url, control);
}

/** The kinds a target can be played (none through a fault control), in words: "stop, crash and spike". */
const TARGET_KINDS = ((names: readonly string[]) =>
  names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)!}`)(
  FAULT_KIND_DEFINITIONS.filter((definition) => definition.mechanism !== "condition").map((definition) => definition.name),
);

function refuseFault(fault: Fault, control: TargetControl, faultsGiven: boolean): void {
  const mechanism = faultKind(fault.kind).mechanism;
  if (mechanism === "condition")
    throw new UsageError(
      `-faults ${fault.kind}: a target has no fault control; ${fault.kind} needs ./server (a target takes ${TARGET_KINDS})`,
    );
  if (mechanism === "restart" && control.kind !== "command")
    throw new UsageError(`-faults ${fault.kind}: a crash starts the service again: it needs -target-cmd`);
  if (mechanism === "pause" && control.kind === "none")
    throw new UsageError(
      `${faultsGiven ? `-faults ${fault.kind}` : "the demo's stop (no -faults)"}: a stop goes to the service's processes: ` +
        "it needs -target-cmd or -target-pid (-target alone takes spikes)",
    );
}

/** Requests at rest that give the target's baseline: its p50 and p99. */
const BASELINE_REQUESTS = 20;
/** The longest wait for the target to come back to its baseline before a strategy, and again after a restart. */
const SETTLE_MS = 60_000;
/** The watcher's pace: one request every this long, a small share of a saturated service's capacity. */
const WATCH_INTERVAL_MS = 250;
const MAX_BODY_BYTES = 1024 * 1024;

/** A target started and measured at rest: the experiment's plan for it. */
export interface PreparedTarget {
  readonly plan: TargetPlan;
  readonly baseline: Baseline;
}

/**
 * Starts the target (or checks it), then measures its baseline: BASELINE_REQUESTS requests, one at
 * a time, each on a connection of its own and within the clients' timeout; one not served ends the
 * experiment (the demo, choose's validation) in one line.
 */
export async function prepareTarget(
  service: TargetService,
  timeoutMs: number,
  say: (line: string) => void,
  stop: AbortSignal,
): Promise<PreparedTarget> {
  await service.start(stop);
  const latencies: number[] = [];
  const now = () => performance.now();
  for (let index = 0; index < BASELINE_REQUESTS && !stop.aborted; index++) {
    const exchange = await exchangeOnce(service.url, { timeoutMs, maxBodyBytes: MAX_BODY_BYTES }, now, stop);
    if (exchange.fate !== "served" && !stop.aborted) {
      const status = exchange.status === undefined ? "" : ` ${exchange.status}`;
      throw new FatalError(
        `-target ${service.url.href}: a request at rest was not served (${exchange.fate}${status}): the experiment measures its baseline first`,
      );
    }
    latencies.push(exchange.endedAt - exchange.sentAt);
  }
  // Stopped (Ctrl-C): no baseline from part of it, and nothing more started.
  if (stop.aborted) throw new Error("interrupted");
  latencies.sort((a, b) => a - b);
  const baseline = { p50Ms: percentile(latencies, 0.5) ?? 0, p99Ms: percentile(latencies, 0.99) ?? 0 };
  const boundMs = Math.round(baselineBoundMs(baseline));
  say(
    `target ${service.url.href} ${service.signalledName}: at rest p50 ${formatDuration(Math.round(baseline.p50Ms))}, ` +
      `p99 ${formatDuration(Math.round(baseline.p99Ms))}; back at baseline means answers within ${formatDuration(boundMs)}`,
  );
  return { baseline, plan: { service, watch: { boundMs, timeoutMs, intervalMs: WATCH_INTERVAL_MS } } };
}

/**
 * Before a strategy: waits until the target is back at its baseline (a collapse the last strategy
 * left behind would judge this one), restarting it with its command where it is not; why it is
 * still not back when it cannot be, undefined when it is.
 */
export async function settleTarget(
  prepared: PreparedTarget,
  strategy: string,
  say: (line: string) => void,
  stop: AbortSignal,
): Promise<string | undefined> {
  const { service, watch } = prepared.plan;
  const back = async () => {
    const settle = { timeoutMs: watch.timeoutMs, maxBodyBytes: MAX_BODY_BYTES, maxWaitMs: SETTLE_MS };
    const now = () => performance.now();
    return (await timeToBaseline(service.url, prepared.baseline, now(), settle, { left: Infinity }, now, stop)).backAfterMs;
  };
  const first = await back();
  if (stop.aborted) throw new Error("interrupted");
  if (first !== undefined && first > 0)
    say(`${strategy}: the target was back at its baseline ${formatDuration(Math.round(first))} after the last run`);
  if (first !== undefined) return undefined;
  const notBack = `not back at its baseline after ${formatDuration(SETTLE_MS)}`;
  if (service.control.kind !== "command") return notBack;
  say(`${strategy}: the target was ${notBack}: started again`);
  await service.stop();
  await service.start(stop);
  const again = await back();
  if (stop.aborted) throw new Error("interrupted");
  return again === undefined ? `${notBack}, nor after it was started again` : undefined;
}
