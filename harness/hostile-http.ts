/**
 * Hostile HTTP for the server: random and malformed requests (garbage, oversized heads, bad
 * chunking, half-closed and reset connections) over raw loopback sockets, each checked
 * against the answer a correct server gives, and connections that never finish their request
 * head (slowloris). Used by `npm run soak` (thousands) and an e2e test (a few hundred), so it
 * lives in harness/, which both may import (harness/README.md).
 */
import { connect, type Socket } from "node:net";
import { type Random, seededRandom } from "../src/backoff/random.ts";

/** How a case ends its side of the connection after writing. */
type Ending = "wait" | "half-close" | "reset";

export interface HostileCase {
  readonly name: string;
  /** The bytes to send, in separate writes. */
  readonly chunks: (random: Random) => (string | Buffer)[];
  readonly ending: Ending;
  /** Status codes of the answers, in order, that a correct server gives; [] means no answer. */
  readonly accept: readonly (readonly number[])[];
}

const CRLF = "\r\n";
/** Node's default limit on a request head is 16 KiB; these go past it. */
const OVER_HEAD_LIMIT = 20_000;

const integer = (random: Random, low: number, high: number) => low + random.uniformInt(high - low + 1);

/** Random bytes that do not start with whitespace (which an HTTP parser may skip as an empty line). */
function garbageBytes(random: Random): Buffer {
  const bytes = Buffer.alloc(integer(random, 1, 4096));
  for (let index = 0; index < bytes.length; index++) bytes[index] = integer(random, 0, 255);
  while (bytes[0] === 0x0d || bytes[0] === 0x0a || bytes[0] === 0x20 || bytes[0] === 0x09) bytes[0] = integer(random, 0x21, 0x7e);
  return bytes;
}

/** Printable lines with CRLFs: text that looks a little like HTTP and is not. */
function garbageText(random: Random): string {
  const lines = Array.from({ length: integer(random, 1, 12) }, () =>
    Array.from({ length: integer(random, 1, 80) }, () => String.fromCharCode(integer(random, 0x20, 0x7e))).join(""),
  );
  let text = lines.join(CRLF) + CRLF + CRLF;
  if (text.startsWith(" ")) text = `x${text}`;
  return text;
}

const get = (path: string, headers = "") => `GET ${path} HTTP/1.1${CRLF}Host: 127.0.0.1${CRLF}${headers}`;
const closing = (path: string, headers = "") => `${get(path, headers)}Connection: close${CRLF}${CRLF}`;

const only = (status: number) => [[status]] as const;
const NO_ANSWER = [[]] as const;

export const HOSTILE_CASES: readonly HostileCase[] = [
  { name: "garbage bytes", chunks: (random) => [garbageBytes(random)], ending: "wait", accept: only(400) },
  { name: "garbage text", chunks: (random) => [garbageText(random)], ending: "wait", accept: only(400) },
  { name: "garbage then half-close", chunks: (random) => [garbageBytes(random)], ending: "half-close", accept: only(400) },
  {
    name: "oversized header",
    chunks: (random) => [`${get("/api")}X-Big: ${"a".repeat(OVER_HEAD_LIMIT + integer(random, 0, 50_000))}${CRLF}${CRLF}`],
    ending: "wait",
    accept: only(431),
  },
  {
    name: "too many headers",
    chunks: () => [`${get("/api")}${Array.from({ length: 3_000 }, (_, index) => `X-H${index}: v${CRLF}`).join("")}${CRLF}`],
    ending: "wait",
    accept: only(431),
  },
  { name: "oversized URL", chunks: () => [closing(`/api?${"q".repeat(OVER_HEAD_LIMIT)}`)], ending: "wait", accept: [[431], [414], [400]] },
  {
    name: "chunk size not hex",
    chunks: () => [`${get("/api")}Transfer-Encoding: chunked${CRLF}Connection: close${CRLF}${CRLF}ZZZ${CRLF}hello${CRLF}0${CRLF}${CRLF}`],
    ending: "wait",
    accept: only(400),
  },
  {
    name: "chunk size overflow",
    chunks: () => [`${get("/api")}Transfer-Encoding: chunked${CRLF}Connection: close${CRLF}${CRLF}ffffffffffffffffffffff${CRLF}x${CRLF}`],
    ending: "wait",
    accept: only(400),
  },
  {
    name: "chunk without CRLF",
    chunks: () => [`${get("/api")}Transfer-Encoding: chunked${CRLF}Connection: close${CRLF}${CRLF}5${CRLF}helloXX0${CRLF}${CRLF}`],
    ending: "wait",
    accept: only(400),
  },
  {
    name: "chunked body cut short, half-close",
    chunks: () => [`${get("/api")}Transfer-Encoding: chunked${CRLF}${CRLF}5${CRLF}hel`],
    ending: "half-close",
    accept: only(400),
  },
  {
    name: "Content-Length and Transfer-Encoding",
    chunks: () => [`${get("/api")}Content-Length: 5${CRLF}Transfer-Encoding: chunked${CRLF}Connection: close${CRLF}${CRLF}0${CRLF}${CRLF}`],
    ending: "wait",
    accept: only(400),
  },
  {
    name: "conflicting Content-Length",
    chunks: () => [`${get("/api")}Content-Length: 5${CRLF}Content-Length: 6${CRLF}Connection: close${CRLF}${CRLF}hello!`],
    ending: "wait",
    accept: only(400),
  },
  {
    name: "Content-Length too large",
    chunks: () => [`${get("/api")}Content-Length: 99999999999999999999999${CRLF}Connection: close${CRLF}${CRLF}`],
    ending: "wait",
    accept: only(400),
  },
  {
    name: "negative Content-Length",
    chunks: () => [`${get("/api")}Content-Length: -1${CRLF}Connection: close${CRLF}${CRLF}`],
    ending: "wait",
    accept: only(400),
  },
  { name: "space in header name", chunks: () => [closing("/api", `Bad Header: x${CRLF}`)], ending: "wait", accept: only(400) },
  { name: "control byte in header value", chunks: () => [closing("/api", `X-A: a\x01b${CRLF}`)], ending: "wait", accept: only(400) },
  { name: "NUL in URL", chunks: () => [closing("/a\0pi")], ending: "wait", accept: only(400) },
  {
    name: "unknown method",
    chunks: () => [`FROB /api HTTP/1.1${CRLF}Host: x${CRLF}Connection: close${CRLF}${CRLF}`],
    ending: "wait",
    accept: only(400),
  },
  {
    name: "bad HTTP version",
    chunks: () => [`GET /api HTTP/9.9${CRLF}Host: x${CRLF}Connection: close${CRLF}${CRLF}`],
    ending: "wait",
    accept: [[400], [505]],
  },
  {
    name: "HTTP/1.1 without Host",
    chunks: () => [`GET /api HTTP/1.1${CRLF}Connection: close${CRLF}${CRLF}`],
    ending: "wait",
    accept: only(400),
  },
  { name: "HTTP/1.0 without Host", chunks: () => [`GET /api HTTP/1.0${CRLF}${CRLF}`], ending: "wait", accept: only(200) },
  {
    name: "bare LF line ends",
    chunks: () => [`GET /api HTTP/1.1\nHost: x\nConnection: close\n\n`],
    ending: "wait",
    accept: [[200], [400]],
  },
  { name: "folded header line", chunks: () => [closing("/api", `X-A: a${CRLF} b${CRLF}`)], ending: "wait", accept: [[200], [400]] },
  { name: "request line cut short, half-close", chunks: () => ["GET /api HTT"], ending: "half-close", accept: only(400) },
  { name: "head cut short, half-close", chunks: () => [get("/api")], ending: "half-close", accept: only(400) },
  {
    name: "body cut short, half-close",
    chunks: () => [`${get("/api")}Content-Length: 10${CRLF}${CRLF}abc`],
    ending: "half-close",
    accept: only(400),
  },
  // A client that closes its sending side after a complete request has gone away for this
  // server (as for the reference, whose clients close on timeout): no answer, counted abandoned.
  { name: "complete request, half-close", chunks: () => [`${get("/api")}${CRLF}`], ending: "half-close", accept: NO_ANSWER },
  { name: "reset at once", chunks: () => [], ending: "reset", accept: NO_ANSWER },
  { name: "reset mid-head", chunks: () => ["GET /api HTTP/1.1\r\nHo"], ending: "reset", accept: NO_ANSWER },
  { name: "reset after request", chunks: () => [`${get("/api")}${CRLF}`], ending: "reset", accept: NO_ANSWER },
  {
    name: "request in pieces",
    chunks: (random) => {
      const text = closing("/api");
      const cuts = [0, ...Array.from({ length: 4 }, () => integer(random, 1, text.length - 1)).sort((a, b) => a - b), text.length];
      return cuts.slice(1).map((cut, index) => text.slice(cuts[index], cut));
    },
    ending: "wait",
    accept: only(200),
  },
  { name: "GET /api", chunks: () => [closing("/api")], ending: "wait", accept: only(200) },
  { name: "GET /stats", chunks: () => [closing("/stats")], ending: "wait", accept: only(200) },
  { name: "unknown path", chunks: () => [closing("/nope")], ending: "wait", accept: only(404) },
  { name: "absolute-form URL", chunks: () => [closing("http://127.0.0.1/elsewhere")], ending: "wait", accept: only(404) },
  {
    name: "POST with a body",
    chunks: () => [`POST /api HTTP/1.1${CRLF}Host: x${CRLF}Content-Length: 5${CRLF}Connection: close${CRLF}${CRLF}hello`],
    ending: "wait",
    accept: only(405),
  },
  {
    name: "HEAD",
    chunks: () => [`HEAD /api HTTP/1.1${CRLF}Host: x${CRLF}Connection: close${CRLF}${CRLF}`],
    ending: "wait",
    accept: only(405),
  },
  {
    name: "CONNECT",
    chunks: () => [`CONNECT 127.0.0.1:443 HTTP/1.1${CRLF}Host: 127.0.0.1:443${CRLF}${CRLF}`],
    ending: "wait",
    accept: only(405),
  },
  {
    name: "Upgrade",
    chunks: () => [closing("/api", `Upgrade: websocket${CRLF}Connection: Upgrade${CRLF}`)],
    ending: "wait",
    accept: [[200], [405]],
  },
  {
    name: "three pipelined",
    chunks: () => [`${get("/api")}${CRLF}${get("/stats")}${CRLF}${closing("/api")}`],
    ending: "wait",
    accept: [[200, 200, 200]],
  },
  {
    name: "pipelined, then garbage",
    chunks: (random) => [`${get("/api")}${CRLF}`, garbageText(random)],
    ending: "wait",
    accept: [[400], [200, 400]],
  },
];

export interface Exchange {
  readonly statuses: number[];
  /** Why the connection ended badly for the client, if it did (ECONNRESET, …). */
  readonly error: string | undefined;
  /** The server neither answered nor closed within the limit. */
  readonly hung: boolean;
}

/** Status codes at the start of each answer (the server's bodies never contain "HTTP/1.1 "). */
function statusesOf(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
}

/** One connection: write the chunks one event-loop turn apart, end as the case says, read until the server closes. */
export function exchange(port: number, chunks: (string | Buffer)[], ending: Ending, limitMs: number): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket: Socket = connect({ host: "127.0.0.1", port });
    let text = "";
    let error: string | undefined;
    let hung = false;
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("error", (problem: NodeJS.ErrnoException) => (error ??= problem.code ?? problem.message));
    const limit = setTimeout(() => {
      hung = true;
      socket.destroy();
    }, limitMs);
    socket.once("close", () => {
      clearTimeout(limit);
      resolve({ statuses: statusesOf(text), error, hung });
    });
    socket.once("connect", async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return;
        socket.write(chunk);
        await new Promise((next) => setImmediate(next));
      }
      if (ending === "half-close") socket.end();
      else if (ending === "reset") socket.resetAndDestroy();
    });
  });
}

export interface HostileReport {
  readonly sent: number;
  readonly answered: number;
  /** Per case: how many were sent and the wrong outcomes seen (at most a few kept). */
  readonly byCase: Map<string, { sent: number; wrong: number; examples: string[] }>;
  /** How often each answer was seen ("400", "200 200 200", "none"). */
  readonly answers: Map<string, number>;
  readonly wrong: number;
}

/**
 * Sends `count` requests picked at random from the cases, `concurrency` connections at a
 * time. A case's outcome is wrong when its status codes are not one of those it accepts,
 * or the server did not close within `limitMs`.
 */
export async function sendHostileRequests(
  port: number,
  options: { count: number; concurrency: number; seed: number; limitMs?: number; cases?: readonly HostileCase[] },
): Promise<HostileReport> {
  const cases = options.cases ?? HOSTILE_CASES;
  const random = seededRandom(options.seed);
  const byCase = new Map(cases.map((entry) => [entry.name, { sent: 0, wrong: 0, examples: [] as string[] }]));
  const answers = new Map<string, number>();
  let next = 0;
  let answered = 0;
  let wrong = 0;
  const worker = async () => {
    while (next < options.count) {
      // Every case at least once, in order, then at random.
      const index = next < cases.length ? next : integer(random, 0, cases.length - 1);
      next++;
      const entry = cases[index]!;
      const record = byCase.get(entry.name)!;
      record.sent++;
      const result = await exchange(port, entry.chunks(random), entry.ending, options.limitMs ?? 30_000);
      if (result.statuses.length > 0) answered++;
      const answer = result.statuses.length === 0 ? "none" : result.statuses.join(" ");
      answers.set(answer, (answers.get(answer) ?? 0) + 1);
      const accepted = !result.hung && entry.accept.some((statuses) => sameStatuses(statuses, result.statuses));
      if (!accepted) {
        wrong++;
        record.wrong++;
        if (record.examples.length < 3) {
          record.examples.push(
            `got [${result.statuses.join(", ")}]${result.error === undefined ? "" : ` ${result.error}`}${result.hung ? " (hung)" : ""}`,
          );
        }
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return { sent: next, answered, byCase, answers, wrong };
}

function sameStatuses(expected: readonly number[], got: readonly number[]): boolean {
  return expected.length === got.length && expected.every((status, index) => status === got[index]);
}

export interface StalledConnection {
  readonly socket: Socket;
  readonly openedAt: number;
  /** Resolves when the server closes it: when, and what it answered. */
  readonly closed: Promise<{ atMs: number; statuses: number[] }>;
}

/**
 * Opens `count` connections that send part of a request head and never finish it, in
 * batches so as not to overflow the listen backlog. Each stays open until the server closes it.
 */
export async function openStalledConnections(port: number, count: number, batch = 500): Promise<StalledConnection[]> {
  const stalled: StalledConnection[] = [];
  for (let opened = 0; opened < count; opened += batch) {
    const connects: Promise<void>[] = [];
    for (let index = 0; index < Math.min(batch, count - opened); index++) {
      const socket = connect({ host: "127.0.0.1", port });
      let text = "";
      socket.setEncoding("latin1");
      socket.on("data", (chunk: string) => (text += chunk));
      socket.on("error", () => {}); // a reset instead of a close is still a close
      const closed = new Promise<{ atMs: number; statuses: number[] }>((resolve) =>
        socket.once("close", () => resolve({ atMs: performance.now(), statuses: statusesOf(text) })),
      );
      connects.push(
        new Promise((resolve, reject) => {
          socket.once("connect", () => {
            socket.write(`GET /api HTTP/1.1${CRLF}Host: 127.0.0.1${CRLF}X-Never: finished`);
            resolve();
          });
          socket.once("error", reject);
        }),
      );
      stalled.push({ socket, openedAt: performance.now(), closed });
    }
    await Promise.all(connects);
  }
  return stalled;
}
