import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeFailure, UsageError } from "../../../src/cli/usage-error.ts";
import { main as clientMain } from "../../../src/client/main.ts";
import type { ProgramMain } from "../../../src/runtime/program-io.ts";
import { main as demoMain } from "../../../src/demo/main.ts";
import { main as serverMain } from "../../../src/server/main.ts";
import { main as simMain } from "../../../src/sim/main.ts";
import { SERVER_MODEL_KINDS } from "../../../src/model/servers/models.ts";
import { STRATEGY_CHOICES } from "../../../src/strategies/registry.ts";
import { BAD_FLAGS } from "../../helpers/bad-flags.ts";
import { capturedIo } from "../../helpers/captured-io.ts";
import { temporaryDir } from "../../helpers/temporary-dirs.ts";

/*
 * Every bad flag of every program, in process: main(argv, io) must throw a UsageError before
 * doing anything, and the entry point's formatting of it must be one line naming the flag,
 * the hint, exit code 2, and no stack; below, the exact line for the cases whose wording
 * matters. (test/e2e/bad-flags.test.ts runs a few through the real processes, where the
 * entry point writes this same text and exits with this code.)
 */

const noLaunch = () => {
  throw new Error("the demo started a program although its flags were bad");
};

const PROGRAMS: Record<keyof typeof BAD_FLAGS, ProgramMain> = {
  server: serverMain,
  client: clientMain,
  sim: simMain,
  demo: (argv, io) => demoMain(argv, io, noLaunch),
};

/** What the entry point would print and exit with for these flags; the program must have written nothing. */
async function usageFailure(name: keyof typeof PROGRAMS, args: readonly string[]): Promise<{ lines: string[]; exitCode: number }> {
  const { io, stdout, stderr } = capturedIo();
  let thrown: unknown;
  try {
    await PROGRAMS[name](args, io);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(UsageError);
  expect(stdout()).toBe("");
  expect(stderr()).toBe("");
  const failure = describeFailure(name, thrown, { debug: true });
  return { lines: failure.text.split("\n"), exitCode: failure.exitCode };
}

describe("bad flags, in process", () => {
  for (const [name, cases] of Object.entries(BAD_FLAGS) as [keyof typeof BAD_FLAGS, (typeof BAD_FLAGS)["server"]][]) {
    it(`${name}: at least 12 cases`, () => expect(cases.length).toBeGreaterThanOrEqual(12));

    it.each(cases.map((entry) => [entry.args.join(" "), entry] as const))(`${name} %s`, async (_label, { args, names }) => {
      const { lines, exitCode } = await usageFailure(name, args);
      expect(exitCode).toBe(2);
      expect(lines).toHaveLength(3); // the error, the hint, and the final newline
      expect(lines[0]).toMatch(new RegExp(`^${name}: .*${names.replace(/-/g, "\\-")}(?![\\w-])`));
      expect(lines[1]).toBe(`Run '${name} -h' for usage.`);
      expect(lines[2]).toBe("");
    });
  }
});

/** The exact wording, moved here from the end-to-end files (the process adds nothing to it). */
const CLIENT_ROWS: readonly (readonly [readonly string[], string])[] = [
  [["-clients", "many"], 'client: invalid value "many" for flag -clients: must be an integer'],
  [
    ["-strategy", "hope"],
    // The registry's names and aliases, in its order: a new strategy joins the list without a change here.
    `client: invalid value "hope" for flag -strategy: must be one of ${STRATEGY_CHOICES.join(", ")}`,
  ],
  [
    ["-exponential-backoff", "-strategy", "grpc"],
    "client: -exponential-backoff selects -strategy exponential-backoff; it cannot be combined with -strategy grpc",
  ],
  [["-strategy", "fixed", "-jitter", "0.2"], "client: -jitter does not apply to -strategy fixed (it takes -simple-backoff-delay)"],
  [
    ["-strategy", "exponential-backoff", "-jitter", "0.1"],
    "client: -jitter does not apply to -strategy exponential-backoff (it takes -min-delay, -max-delay, -backoff-factor, -jitter-sd)",
  ],
  [
    ["-strategy", "exponential", "-min-delay", "2s", "-max-delay", "1s"],
    "client: invalid settings for -strategy exponential: -min-delay (ms) must be <= -max-delay (ms) (got 2000 > 1000)",
  ],
  [["-url", "ftp://x"], 'client: invalid value "ftp://x" for flag -url: must be an http:// or https:// URL'],
  [
    ["-url", "http://127.0.0.1:99999/api"],
    'client: invalid value "http://127.0.0.1:99999/api" for flag -url: port 99999 is out of range (1 to 65535)',
  ],
  [
    ["-url", "http://alice:s3cret@127.0.0.1:0/api"],
    'client: invalid value "http://***@127.0.0.1:0/api" for flag -url: port 0 is out of range (1 to 65535)',
  ],
  [["-shard", "3/3"], 'client: invalid value "3/3" for flag -shard: the shard index must be 0 to 2'],
  [
    ["-start-at", "noon"],
    'client: invalid value "noon" for flag -start-at: must be an RFC 3339 time such as 2025-06-21T22:11:08Z, or epoch milliseconds',
  ],
  [["-workers", "0"], 'client: invalid value "0" for flag -workers: must be auto or an integer from 1 to 1024'],
  // What does not split over worker threads or shards yet is refused, not run as something else.
  [
    ["-arrivals", "open", "-rate", "10", "-workers", "2"],
    "client: -arrivals open runs in one thread of one process; it cannot be combined with -workers 2",
  ],
  [
    ["-arrivals", "open", "-rate", "10", "-shard", "1/2"],
    "client: -arrivals open runs in one thread of one process; it cannot be combined with -shard 1/2",
  ],
  [["-arrivals", "open", "-rate", "1000001"], 'client: invalid value "1000001" for flag -rate: must be <= 1000000'],
  [
    ["-metrics-listen", "127.0.0.1:0", "-workers", "2"],
    "client: -metrics-listen counts the main thread's users only; it cannot be combined with -workers 2",
  ],
  [
    ["-clients", "10", "-budget", "grpc", "-instances", "2", "-shard", "0/2"],
    "client: -instances 2 spreads each instance's users over every share; with -shard 0/2 use -instances 0 (one per client)",
  ],
];

const SIM_ROWS: readonly (readonly [readonly string[], string])[] = [
  [["-outage-at", "5s,10s", "-outage", "1s,2s,3s"], "sim: -outage lists 3 durations for the 2 outages of -outage-at"],
  [
    ["-sweep", "color=red"],
    'sim: invalid value "color=red" for flag -sweep: cannot sweep color; one of outage, clients, lambda, timeout, backlog, limit, baseDelay, simple-backoff-delay',
  ],
  [["-sweep", "clients=0"], 'sim: in -sweep: invalid value "0" for flag -clients: must be >= 1'],
  [["-factor", "0.5"], 'sim: invalid value "0.5" for flag -factor: must be >= 1'],
  [["-clients", "10000001"], 'sim: invalid value "10000001" for flag -clients: the simulator runs at most 10000000 clients'],
  [["-max-in-service", "0"], 'sim: invalid value "0" for flag -max-in-service: must be >= 1'],
  [["-timeout", "100us"], 'sim: invalid value "100µs" for flag -timeout: the simulator needs at least 1ms'],
  [
    ["-report-interval", "1us", "-duration", "1h"],
    'sim: invalid value "1µs" for flag -report-interval: more than 10000000 server reports in -duration 1h0m0s',
  ],
  [["-parallel", "0"], 'sim: invalid value "0" for flag -parallel: must be >= 1'],
  [["-strategies", "fixed,table", "-max-delay", "3s"], "sim: -max-delay does not apply to any of -strategies fixed,table"],
  [["-max-delay", "3s"], "sim: -max-delay does not apply to -strategy fixed (it takes -simple-backoff-delay)"],
  // Hostile values (issue 39): a size past the limits, a number a double cannot hold, bytes a terminal would act on.
  [
    ["-faults", "spike@1s+1s*1000000"],
    "sim: -faults: the spike spike@1s+1s*1000000 runs 1000000 times the 1000 clients; at most 10000000 clients in all",
  ],
  [
    ["-faults", "spike@1s+1s*1e308"],
    "sim: -faults: the spike spike@1s+1s*1e+308 runs 1e+308 times the 1000 clients; at most 10000000 clients in all",
  ],
  // An open loop's spike once went unchecked: ×1e308 ran until killed, ×1000000 took 7.4 s for 1e8 events.
  [
    ["-arrivals", "open", "-rate", "100", "-faults", "spike@1s+1s*1e308"],
    "sim: -faults: the spike spike@1s+1s*1e+308 runs 1e+308 times the 100 arrivals per second; at most 1000000 arrivals per second in all",
  ],
  [
    ["-arrivals", "open", "-rate", "100", "-faults", "spike@1s+1s*10001"],
    "sim: -faults: the spike spike@1s+1s*10001 runs 10001 times the 100 arrivals per second; at most 1000000 arrivals per second in all",
  ],
  [["-arrivals", "open", "-rate", "1e12"], 'sim: invalid value "1e12" for flag -rate: must be <= 1000000'],
  [
    ["-clients", "100000000000000000000000"],
    'sim: invalid value "100000000000000000000000" for flag -clients: out of range: an integer is at most 9007199254740991 in size',
  ],
  [
    ["-arrivals", "open", "-rate", "1e999"],
    'sim: invalid value "1e999" for flag -rate: out of range: a number is at most 1.7976931348623157e+308 in size',
  ],
  [["-duration", "99999999999h"], 'sim: invalid value "99999999999h" for flag -duration: must be <= 2777h46m40s'],
  [
    ["-model", "queue", "-shed-with", "drop"],
    "sim: -shed-with drop says how shed requests are turned away: it needs -max-concurrency (or -queue-limit)",
  ],
  [
    ["-model", "cu\u0000\u001bbic"],
    `sim: invalid value "cu\\x00\\x1bbic" for flag -model: must be one of ${SERVER_MODEL_KINDS.join(", ")}`,
  ],
];

describe("the exact usage error, in process", () => {
  const expectMessage = async (name: keyof typeof PROGRAMS, args: readonly string[], message: string) => {
    const { lines, exitCode } = await usageFailure(name, args);
    expect(exitCode).toBe(2);
    expect(lines).toEqual([message, `Run '${name} -h' for usage.`, ""]);
  };

  it.each(CLIENT_ROWS)("client rejects %j", (args, message) => expectMessage("client", args, message));
  it.each(SIM_ROWS)("sim rejects %j", (args, message) => expectMessage("sim", args, message));
  it.each([
    [["-error-rate", "1.5"], 'server: invalid value "1.5" for flag -error-rate: must be <= 1'],
    [["-shed-with", "drop"], "server: -shed-with drop says how shed requests are turned away: it needs -max-concurrency (or -queue-limit)"],
    [["-shed-with", "refuse"], 'server: invalid value "refuse" for flag -shed-with: must be one of 503, drop'],
  ] as const)("server rejects %j", (args, message) => expectMessage("server", args, message));
  it.each([
    [["-arrivals", "open"], "client: -arrivals open needs -rate, the arrivals per second"],
    [["-rate", "50"], "client: -rate applies to -arrivals open; closed users send at -clients / -lambda"],
  ] as const)("client rejects %j (fleet protection)", (args, message) => expectMessage("client", args, message));
  const TARGET = ["-target", "http://127.0.0.1:1/"];
  it.each([
    [["-target-cmd", "gunicorn app:application"], "demo: -target-cmd and -target-pid go with -target URL, the service they run"],
    [
      ["-target", "http://192.0.2.1/"],
      "demo: -target 192.0.2.1: the crash experiment stops and loads the service it names: only on this machine's loopback",
    ],
    [
      [...TARGET, "-target-cmd", "x", "-target-pid", "5"],
      "demo: -target-cmd or -target-pid: one says how the crash experiment acts on the service",
    ],
    [
      TARGET,
      "demo: the demo's stop (no -faults): a stop goes to the service's processes: it needs -target-cmd or -target-pid (-target alone takes spikes)",
    ],
    [
      [...TARGET, "-faults", "stop@1s+1s"],
      "demo: -faults stop: a stop goes to the service's processes: it needs -target-cmd or -target-pid (-target alone takes spikes)",
    ],
    [
      [...TARGET, "-target-pid", "5", "-faults", "crash@1s+1s"],
      "demo: -faults crash: a crash starts the service again: it needs -target-cmd",
    ],
    [
      [...TARGET, "-target-cmd", "x", "-faults", "capacity@1s+1s*0.5"],
      "demo: -faults capacity: a target has no fault control; capacity needs ./server (a target takes stop, crash and spike)",
    ],
  ] as const)("demo rejects %j (-target) before starting anything", (args, message) => expectMessage("demo", args, message));
  it("demo rejects a bad pass-through flag before starting anything", () =>
    expectMessage(
      "demo",
      ["-server-args", "-limit many"],
      'demo: in -server-args: invalid value "many" for flag -limit: must be an integer',
    ));
  it.each([
    [[], "1000 clients; at most 10000000 clients in all"],
    // An open loop's spike once started the programs and then ran its spike client with -rate Infinity.
    [["-client-args", "-arrivals open -rate 100"], "100 arrivals per second; at most 1000000 arrivals per second in all"],
  ])("demo rejects a spike past the limit (%j) before starting anything or making its results folder", async (load, limit) => {
    const out = join(temporaryDir(), "results");
    await expectMessage(
      "demo",
      [...load, "-faults", "spike@1s+1s*1e308", "-out", out],
      `demo: -faults: the spike spike@1s+1s*1e+308 runs 1e+308 times the ${limit}`,
    );
    expect(existsSync(out)).toBe(false);
  });
  it("quotes a value of 200 000 characters as an excerpt, in a line of at most 1000", async () => {
    const { lines } = await usageFailure("sim", ["-faults", `stop@1s+${"9".repeat(200_000)}`]);
    expect(lines[0]).toMatch(/^sim: invalid value "stop@1s\+9{56}… \(199944 more characters\)" for flag -faults: /);
    expect(lines[0]!.length).toBeLessThanOrEqual(1000 + "… (N more characters)".length + 10);
  });
  it("sim rejects -deadline-aware without -propagate-deadline", () =>
    expectMessage("sim", ["-deadline-aware"], "sim: -deadline-aware needs -propagate-deadline: without it the clients send no deadline"));
});
