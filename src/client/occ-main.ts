import { streamRandom } from "../backoff/random.ts";
import { formatDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import { DEBUG_FLAG, type FlagSpec, parseFlags, type ProgramDescription } from "../cli/flags.ts";
import { OCC_WORKLOAD_FLAG } from "../cli/workload.ts";
import type { Clock, Timer, TimerOwner } from "../clock/clock.ts";
import { realClock } from "../clock/real-clock.ts";
import { formatOccJson } from "../contracts/occ-line-writer.ts";
import { OccClient, type OccClientTally } from "../model/occ/occ-client.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { randomSeed } from "../runtime/random-seed.ts";
import { blogPolicy, blogRunsHelp, parseBlogRuns } from "../strategies/blog-backoff.ts";
import { BLOG_BACKOFF_FLAGS, blogStrategiesFlag } from "../strategies/occ-flags.ts";
import { createOccHttpTransport } from "./occ-transport.ts";
import { CLIENT_FLAGS } from "../options/client.ts";

const clientFlag = <Name extends (typeof CLIENT_FLAGS)[number]["name"]>(name: Name) =>
  CLIENT_FLAGS.find((flag) => flag.name === name) as Extract<(typeof CLIENT_FLAGS)[number], { name: Name }>;

/** Timers firing later than this behind their plan mean the client, not the server, set the pace. */
const BEHIND_MS = 20;

const OCC_CLIENT_FLAGS = [
  OCC_WORKLOAD_FLAG,
  { ...clientFlag("url"), default: "http://127.0.0.1:8070/row", description: "the row of ./server -workload occ" },
  {
    name: "clients",
    group: "system",
    kind: "integer",
    default: 100,
    min: 1,
    max: 10_000,
    placeholder: "n",
    description: "clients, all started at once, each updating the row once",
  },
  blogStrategiesFlag("strategy", "full-jitter", "the backoff after a 412"),
  ...BLOG_BACKOFF_FLAGS,
  { ...clientFlag("timeout"), default: 10_000, description: "a call not answered within this time fails, and the client backs off" },
  {
    ...clientFlag("duration"),
    default: 300_000,
    minMs: 1,
    description: "give up when some client's write has not landed after this long (exit 1)",
  },
  { ...clientFlag("seed"), description: "random seed of the backoff draws, one stream per client (default: random, printed at start)" },
  { name: "json", group: "output", kind: "boolean", default: false, description: "print the result as one JSON line" },
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

const OCC_CLIENT_PROGRAM: ProgramDescription<typeof OCC_CLIENT_FLAGS> = {
  name: "client -workload occ",
  summary:
    "N clients contending on one versioned row (./server -workload occ), as in the AWS backoff blog: each reads the\n" +
    "version (GET, ETag), writes against it (PUT, If-Match) and, on 412, backs off and starts over until its write\n" +
    "lands. Prints the work (writes tried, the blog's calls; calls counts reads too) and the time until every write landed.",
  flags: OCC_CLIENT_FLAGS,
  epilog: `The blog's policies, as strategies of the registry (with -base 5ms -cap 2s):\n${blogRunsHelp()}`,
};

/** The real clock, noting how late its timers fire against their plan. */
class LatenessClock implements Clock {
  maxLatenessMs = 0;
  private readonly clock: Clock;
  constructor(clock: Clock) {
    this.clock = clock;
  }
  now(): number {
    return this.clock.now();
  }
  schedule(delayMs: number, callback: () => void): Timer {
    const plannedAt = this.clock.now() + Math.max(0, delayMs);
    return this.clock.schedule(delayMs, () => {
      this.maxLatenessMs = Math.max(this.maxLatenessMs, this.clock.now() - plannedAt);
      callback();
    });
  }
  arm(owner: TimerOwner, delayMs: number): void {
    this.clock.arm(owner, delayMs);
  }
  cancel(timer: Timer | TimerOwner): void {
    this.clock.cancel(timer);
  }
}

export async function occClientMain(argv: readonly string[], io: ProgramIo): Promise<number> {
  const parsed = parseFlags(OCC_CLIENT_PROGRAM, argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return 0;
  }
  const values = parsed.values;
  const runs = parseBlogRuns(values.strategy);
  if (runs.length !== 1)
    throw new UsageError(`-strategy takes one strategy with -workload occ (./sim -workload occ -strategies compares several)`);
  const run = runs[0]!;
  const policy = blogPolicy(run, values.base, values.cap);
  const seed = values.seed ?? randomSeed();
  const clock = new LatenessClock(realClock);
  const transport = createOccHttpTransport(values.url, values.timeout);
  io.stderr.write(
    `client: workload occ: ${values.clients} clients on ${values.url}, ${run.name} (base ${formatDuration(values.base)}, ` +
      `cap ${formatDuration(values.cap)}), seed ${seed}\n`,
  );
  const startedAt = clock.now();
  const clients: OccClient[] = [];
  let done = 0;
  const finished = new Promise<void>((resolve) => {
    for (let index = 0; index < values.clients; index++) {
      const client = new OccClient(transport, policy, streamRandom(seed, index), clock, () => {
        if (++done === values.clients) resolve();
      });
      clients.push(client);
      client.start();
    }
  });
  let timer: NodeJS.Timeout | undefined;
  const outOfTime = new Promise<"out of time">((resolve) => (timer = setTimeout(() => resolve("out of time"), values.duration)));
  const ended = await Promise.race([finished, outOfTime]);
  clearTimeout(timer);
  const endedAt = clock.now();
  await transport.close();
  const tallies = clients.map((client) => client.tally);

  const sum = (pick: (tally: OccClientTally) => number) => tallies.reduce((total, tally) => total + pick(tally), 0);
  const landed = tallies.filter((tally) => tally.succeeded).length;
  const writes = sum((tally) => tally.writes);
  const calls = sum((tally) => tally.reads + tally.writes);
  const errors = [...transport.errorKinds.values()].reduce((total, count) => total + count, 0);
  const completionMs = (ended === "out of time" ? endedAt : Math.max(...tallies.map((tally) => tally.doneAtMs ?? endedAt))) - startedAt;
  const late = Math.round(clock.maxLatenessMs);
  if (values.json) {
    const line = { workload: "occ", source: "client", strategy: run.name, clients: values.clients, trials: 1 } as const;
    io.stdout.write(
      `${formatOccJson({ ...line, writes, calls, completionMs, landed, errors, seed, timersLateMs: late, meanCallMs: Number(transport.meanCallMs().toFixed(2)) })}\n`,
    );
  } else {
    const kinds = [...transport.errorKinds].map(([kind, count]) => `${kind} ${count}`).join(", ");
    const outcome =
      ended === "out of time"
        ? `${values.clients - done} clients' writes not landed after ${formatDuration(values.duration)} (-duration); ${landed} landed`
        : `every write landed (${landed}) in ${formatDuration(Math.round(completionMs))}`;
    io.stdout.write(
      `OCC: ${values.clients} clients, ${run.name}: ${outcome}; work ${writes} writes, ${calls} calls, ` +
        `${sum((tally) => tally.conflicts)} conflicts (412), ${errors} errors${kinds === "" ? "" : ` (${kinds})`}; ` +
        `mean call ${transport.meanCallMs().toFixed(1)} ms\n`,
    );
  }
  if (late > BEHIND_MS)
    io.stderr.write(`client: behind: backoff timers fired up to ${late} ms late; the times include the client's own lag\n`);
  return ended === "out of time" || landed < values.clients ? 1 : 0;
}
