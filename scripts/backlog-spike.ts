/*
 * Does the kernel hand a service stale connections after a spike? The zoo's gunicorn-sync-backlog-16
 * (Debian's gunicorn, 4 sync workers of 50 ms, `--backlog 16`) under the zoo's users and spike, with
 * nothing of ours between them: bare sockets, one request per connection, 200 users thinking 5 s
 * (exponential, seeded), a 1 s timeout and a retry 100 ms later (fixed retry), and 400 more users
 * from 15 s to 25 s (spike@15s+10s*3). The service logs the age of each request its workers take
 * (test/fixtures/sleeper/app.py, SLEEPER_AGES), so the run shows whether connections past the full
 * accept queue were kept and served late (after their client gave up), and when the users were back.
 *
 *   node --import ./src/register-tsx.mjs scripts/backlog-spike.ts [seed] [backlog] [bare|client] [linger-ms]
 *
 * With a linger, a bare socket whose attempt timed out is closed that much later rather than at
 * once, as a client does whose connect outlives its request's timeout: the kernel's first SYN
 * retransmission (1 s after the SYN) then goes out.
 *
 * With `client`, the same users and spike are two of our ./client processes instead (fixed retry,
 * as the zoo's demo runs them; the spike's from 15 s, for 10 s): what they did and what the kernel
 * counted, beside the bare sockets' (the service cannot tell those requests' ages: ./client sends
 * no X-Sent-Ms).
 *
 * About 75 s; gunicorn runs in its own process group and is stopped by it, on failure too.
 */
import { connect } from "node:net";
import { resolve } from "node:path";
import { seededRandom } from "../src/backoff/random.ts";
import { parseClientLine } from "../src/contracts/client-line.ts";
import { median } from "../src/model/percentile.ts";
import { ChildProgram } from "../src/runtime/child-program.ts";
import { KERNEL_COUNTERS, kernelCounters } from "./real-service-runs.ts";

const seed = Number(process.argv[2] ?? 1);
const backlog = Number(process.argv[3] ?? 16);
const driver = process.argv[4] ?? "bare";
const lingerMs = Number(process.argv[5] ?? 0);
if (
  !Number.isSafeInteger(seed) ||
  !Number.isSafeInteger(backlog) ||
  backlog < 1 ||
  (driver !== "bare" && driver !== "client") ||
  !Number.isSafeInteger(lingerMs) ||
  lingerMs < 0
) {
  process.stderr.write("usage: backlog-spike [seed] [backlog] [bare|client] [linger-ms]\n");
  process.exit(2);
}

const USERS = 200;
const THINK_MS = 5_000;
const TIMEOUT_MS = 1_000;
const RETRY_AFTER_MS = 100;
const SPIKE = { fromMs: 15_000, untilMs: 25_000, users: 400 };
const END_MS = 70_000;

interface Window {
  ok: number;
  timedOut: number;
  errors: number;
  latenciesMs: number[];
}

const windows: Window[] = Array.from({ length: END_MS / 1000 }, () => ({ ok: 0, timedOut: 0, errors: 0, latenciesMs: [] }));
const APP_DIR = resolve(import.meta.dirname, "../test/fixtures/sleeper");
const service = new ChildProgram("gunicorn", "/usr/bin/python3", [
  ...["-m", "gunicorn", "-w", "4", "-b", "127.0.0.1:0", "--backlog", String(backlog)],
  ...["-e", "SLEEP_MS=50", "-e", "SLEEPER_AGES=1", "--chdir", APP_DIR, "app:application"],
]);

try {
  const listening = await service.waitForLine(/Listening at: http:\/\/127\.0\.0\.1:\d+/, { stream: "stderr", timeoutMs: 30_000 });
  const port = Number(/:(\d+) \(/.exec(listening)![1]);
  const countersBefore = kernelCounters();
  const startedAt = Date.now();
  const elapsed = () => Date.now() - startedAt;
  const random = seededRandom(seed);
  const windowNow = () => windows[Math.min(windows.length - 1, Math.floor(elapsed() / 1000))]!;

  /** One attempt on a new connection; the user thinks after an answer, retries after a timeout or an error. */
  const attempt = (active: () => boolean) => {
    if (elapsed() >= END_MS || !active()) return;
    const sentAt = Date.now();
    const socket = connect(port, "127.0.0.1");
    let over = false;
    const end = (outcome: "ok" | "timedOut" | "errors") => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      if (outcome === "timedOut" && lingerMs > 0) setTimeout(() => socket.destroy(), lingerMs);
      else socket.destroy();
      const window = windowNow();
      window[outcome]++;
      if (outcome === "ok") {
        window.latenciesMs.push(Date.now() - sentAt);
        setTimeout(() => attempt(active), random.exponential(THINK_MS));
      } else setTimeout(() => attempt(active), RETRY_AFTER_MS);
    };
    const timer = setTimeout(() => end("timedOut"), TIMEOUT_MS);
    socket.on("connect", () => socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Sent-Ms: ${sentAt}\r\nConnection: close\r\n\r\n`));
    socket.on("data", (chunk: Buffer) => end(chunk.toString("latin1").startsWith("HTTP/1.1 200") ? "ok" : "errors"));
    socket.on("error", () => end("errors"));
    socket.on("close", () => end("errors"));
  };
  const think = (active: () => boolean) => setTimeout(() => attempt(active), random.exponential(THINK_MS));

  if (driver === "client") await withOurClients(port, startedAt);
  else {
    for (let user = 0; user < USERS; user++) think(() => true);
    setTimeout(() => {
      for (let user = 0; user < SPIKE.users; user++) think(() => elapsed() < SPIKE.untilMs);
    }, SPIKE.fromMs);
    await new Promise((done) => setTimeout(done, END_MS + TIMEOUT_MS + 500));
  }

  const handled = service.stderr
    .map((line) => /^handled ([\d.]+) age-ms ([\d.]+)/.exec(line.text))
    .filter((match) => match !== null)
    .map((match) => ({ atMs: Number(match[1]) * 1000 - startedAt, ageMs: Number(match[2]) }));
  const countersAfter = kernelCounters();
  report(handled, Object.fromEntries(KERNEL_COUNTERS.map((name) => [name, countersAfter[name]! - countersBefore[name]!])));
} finally {
  await service.stopGroup();
}

/** The users and the spike as two ./client processes; their windows counted into `windows` by their end instants. */
async function withOurClients(port: number, startedAt: number): Promise<void> {
  const client = (users: number, clientSeed: number, durationMs: number) =>
    new ChildProgram("client", resolve(import.meta.dirname, "../client"), [
      ...["-url", `http://127.0.0.1:${port}/`, "-clients", String(users), "-lambda", String(THINK_MS / 1000)],
      ...["-timeout", `${TIMEOUT_MS}ms`, "-simple-backoff-delay", `${RETRY_AFTER_MS}ms`, "-interval", "1s"],
      ...["-seed", String(clientSeed), "-duration", `${durationMs}ms`, "-json"],
    ]);
  const users = client(USERS, seed, END_MS);
  let spike: ChildProgram | undefined;
  const spikeTimer = setTimeout(() => (spike = client(SPIKE.users, seed + 1000, SPIKE.untilMs - SPIKE.fromMs)), SPIKE.fromMs);
  try {
    await users.exited;
    await spike?.exited;
  } finally {
    clearTimeout(spikeTimer);
    await Promise.all([users.stop(), spike?.stop()]);
  }
  for (const program of [users, spike]) {
    for (const [index, line] of (program?.stdout ?? []).entries()) {
      if (!line.text.startsWith("{")) continue;
      const parsed = parseClientLine(line.text, { file: "a client's stdout", line: index + 1 });
      if (parsed.kind !== "window") continue;
      const window = windows[Math.min(windows.length - 1, Math.max(0, Math.floor((parsed.epochMs - startedAt) / 1000) - 1))]!;
      window.ok += parsed.ok;
      window.timedOut += parsed.timedout;
      window.errors += parsed.errors;
      if (parsed.latencyMs !== null) window.latenciesMs.push(parsed.latencyMs.p50);
    }
  }
}

function report(handled: readonly { atMs: number; ageMs: number }[], counters: Record<string, number>): void {
  const medianText = (values: readonly number[]) => String(median(values) ?? "-");
  const lines = windows.map(
    (window, second) =>
      `${String(second).padStart(3)} s  OK ${window.ok}  timed out ${window.timedOut}  errors ${window.errors}  p50 ${medianText(window.latenciesMs)} ms`,
  );
  const steady = windows.slice(5, SPIKE.fromMs / 1000);
  const baseline = steady.reduce((sum, window) => sum + window.ok, 0) / steady.length;
  const good = (window: Window) => window.ok >= 0.9 * baseline && window.timedOut + window.errors <= 0.05 * baseline;
  const after = windows.slice(SPIKE.untilMs / 1000);
  const back = after.findIndex((window, index) => good(window) && after[index + 1] !== undefined && good(after[index + 1]!));
  const stale = handled.filter((request) => request.ageMs > TIMEOUT_MS);
  const latestStale = stale.reduce((latest, request) => Math.max(latest, request.atMs), -Infinity);
  const answered = windows.reduce((sum, window) => sum + window.ok, 0);
  process.stdout.write(
    [
      `backlog-spike: gunicorn, 4 sync workers of 50 ms, --backlog ${backlog}; ${USERS} users, +${SPIKE.users} from 15 s to 25 s; seed ${seed}; ` +
        (driver === "client" ? "two ./client processes" : `bare sockets${lingerMs > 0 ? `, closed ${lingerMs} ms after a timeout` : ""}`),
      ...lines,
      `baseline: ${baseline.toFixed(1)} OK/s (5-15 s); users back (two windows in a row at 90 % of it, failures at most 5 %): ` +
        (back < 0 ? "not by the end" : `${back + 1} s after the spike's end`),
      ...(driver === "client"
        ? ["the requests' ages at the service: not known (./client sends no X-Sent-Ms)"]
        : [
            `the service took ${handled.length} requests; the users got ${answered} answers OK`,
            `taken after their client had given up (older than ${TIMEOUT_MS} ms): ${stale.length}` +
              (stale.length === 0
                ? ""
                : `, the oldest ${Math.max(...stale.map((request) => request.ageMs)).toFixed(0)} ms, the latest ${((latestStale - SPIKE.untilMs) / 1000).toFixed(1)} s after the spike's end`),
            `taken after their client had given up, per 5 s from the spike's start: ${Array.from(
              { length: (END_MS - SPIKE.fromMs) / 5000 },
              (_, index) => {
                const fromMs = SPIKE.fromMs + index * 5000;
                return stale.filter((request) => request.atMs >= fromMs && request.atMs < fromMs + 5000).length;
              },
            ).join(" ")}`,
          ]),
      `the kernel, over the run: ${Object.entries(counters)
        .map(([name, value]) => `${name} ${value}`)
        .join(", ")}`,
      "",
    ].join("\n"),
  );
}
