import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect } from "vitest";
import type { OccSimFigures } from "../../src/runner/occ.ts";
import { REALTIME_PREFIX } from "../../harness/realtime.ts";
import { loadExample, runExample, runExampleReal, runOccExample, type StrategyOutcome } from "../helpers/examples.ts";

/*
 * What `npm run validate` checks for each example of examples/: the published figure, the
 * original simulator's figure where it is public and was run beside ours, and ours, with the
 * outcome asserted against both sides' measured spread. The original simulators are never part
 * of this repository: their figures are read from the results files (docs/*.json) that a script
 * of scripts/ wrote by running them from a clone, with their commit, seeds and machine.
 */

export interface Row {
  readonly quantity: string;
  readonly published: string;
  /** The original simulator's figure, run here, where it is public and runs. */
  readonly theirs: number | undefined;
  readonly ours: number;
}

export interface ExampleValidation {
  readonly file: string;
  readonly name: string;
  readonly source: { readonly title: string; readonly url: string };
  readonly published: string;
  readonly seed: number;
  readonly rows: readonly Row[];
  /** Where ours and the reference differ by more than a few per cent: why, as measured. */
  readonly notes: readonly string[];
}

/** A results file of docs/ that a script of scripts/ wrote from an original simulator run here (its commit, seed and machine inside). */
function recorded<T>(file: string): T {
  return JSON.parse(readFileSync(resolve(import.meta.dirname, "../../docs", file), "utf8")) as T;
}

const share = (outcome: StrategyOutcome) => outcome.counts.ok / outcome.requests;
const only = (outcomes: StrategyOutcome[]) => outcomes[0]!;

async function validation(file: string, rows: Row[], notes: string[] = [], seed = 1): Promise<ExampleValidation> {
  const example = await loadExample(file);
  return { file, name: example.name, source: example.source, published: example.published, seed, rows, notes };
}

/** The flags that take every fault away: the file's -faults and the stop that -faults replaces (by default one at 15 s). */
const NO_FAULT = { faults: null, "outage-at": "0s", outage: "0s" } as const;

/**
 * The trigger matters: the same run without its fault times out no attempt at all, per strategy
 * (each example's published failure is one of timeouts, by the thousand with the fault). Returns
 * the table's row per strategy.
 */
async function expectHealthyWithoutFault(file: string, fault: string, overrides: Record<string, string> = {}): Promise<Row[]> {
  const runs = await runExample(file, { ...overrides, ...NO_FAULT });
  for (const run of runs)
    expect(run.counts.timedout, `${file}, ${run.strategy}, the same run without ${fault}: attempts timed out`).toBe(0);
  return runs.map((run) => ({
    quantity: `${run.strategy}, the same run without ${fault} (the trigger): attempts timed out`,
    published: "not published (0: the fault is the trigger)",
    theirs: undefined,
    ours: run.counts.timedout,
  }));
}

/** Verdicts as numbers for the table: 1 recovered, 0 not. */
const recovered = (outcome: StrategyOutcome) => (outcome.metrics.verdict === "recovered" ? 1 : 0);

/** How an example is scaled down for the real programs: the demo's faults and observation, and client flags beside the file's. */
interface RealScale {
  readonly faults: string;
  readonly observe: string;
  readonly strategies?: string;
  readonly client?: Readonly<Record<string, string>>;
}

/**
 * An example scaled down for the real programs (two shared cores, a few minutes in all), run
 * by the demo and by the simulator with the same flags: rows of both verdicts, 1 recovered.
 * Every strategy must be judged: a run in which the real client fell behind judges nothing, so
 * it is run once more for those strategies, and one still not judged fails the validation.
 */
async function realRows(file: string, scale: RealScale, published: Record<string, string>): Promise<Row[]> {
  const client = { ...scale.client, seed: "1", interval: "1s" };
  const clientArgs = Object.entries(client).flatMap(([name, value]) => [`-${name}`, value]);
  const simulated = await runExample(file, {
    ...client,
    faults: scale.faults,
    ...(scale.strategies ? { strategies: scale.strategies } : {}),
    duration: scaledDurationS(scale),
  });
  const realRun = (strategies: readonly string[], prefix: readonly string[] = []) =>
    runExampleReal(
      file,
      [
        ...["-faults", scale.faults, "-observe", scale.observe, "-strategies", strategies.join(",")],
        ...["-server-args", "-seed 1", "-client-args", clientArgs.join(" ")],
      ],
      prefix,
    );
  const real = await realRun(simulated.map((outcome) => outcome.strategy));
  const unjudged = () => [...real].filter(([, verdict]) => verdict === "invalid").map(([strategy]) => strategy);
  // Run again at real-time priority where allowed, as scripts/example-01-real.ts does: measured at load average 13, the
  // client kept up in every window there, and fell behind at ordinary priority.
  const rerun = unjudged();
  if (rerun.length > 0) for (const [strategy, verdict] of await realRun(rerun, REALTIME_PREFIX)) real.set(strategy, verdict);
  expect(
    unjudged(),
    `${file} on the real programs: the real client fell behind twice (verdict invalid), so these strategies were not judged; ` +
      `the machine was too busy (the second run ${REALTIME_PREFIX.length > 0 ? "at" : "without"} real-time priority)`,
  ).toEqual([]);
  const realtimeWords = REALTIME_PREFIX.length > 0 ? ` under ${REALTIME_PREFIX.join(" ")}, server and client` : " again";
  const label = [scale.faults, `${scale.observe} after`, ...Object.entries(scale.client ?? {}).map(([k, v]) => `-${k} ${v}`)].join(", ");
  return simulated.flatMap((outcome) => {
    const verdict = real.get(outcome.strategy);
    expect(verdict, `${file} ${outcome.strategy} on the real programs`).toBe(outcome.metrics.verdict);
    return [
      {
        quantity:
          `${outcome.strategy}, real programs (${label}): recovered (1) or not (0)` +
          (rerun.includes(outcome.strategy) ? `; run twice: the first run's client fell behind, the second ran${realtimeWords}` : ""),
        published: published[outcome.strategy]!,
        theirs: undefined,
        ours: verdict === "recovered" ? 1 : 0,
      },
      {
        quantity: `${outcome.strategy}, simulator, the same run: recovered (1) or not (0)`,
        published: published[outcome.strategy]!,
        theirs: undefined,
        ours: recovered(outcome),
      },
    ];
  });
}

/** The run's length in the simulator for a scaled real run: the last fault's end and the observation after it. */
function scaledDurationS(scale: RealScale): string {
  const [, at, length] = /@(\d+)s\+(\d+)s/.exec(scale.faults)!;
  return `${Number(at) + Number(length) + Number.parseInt(scale.observe, 10)}s`;
}

/** The recorded run of example 01 on the real programs at real-time priority (scripts/example-01-real.ts). */
interface Example01RealRecord {
  readonly timeout400msRealtimePriority: {
    readonly command: string;
    readonly recordedBy: string;
    readonly realtimePriority: boolean;
    readonly provenance: { readonly commit: string; readonly loadAverage1m: { readonly before: number; readonly after: number } };
    readonly results: readonly {
      readonly strategy: string;
      readonly verdict: string;
      readonly why: string;
      readonly clientWindows: number;
      readonly clientWindowsBehind: number;
    }[];
  };
}

/**
 * What the recorded real run says: a judged collapse of fixed retry (and backoff's recovery) that
 * does not depend on the validation's own real run keeping up. Asserted, so that the page cannot
 * cite a record whose client fell behind or whose verdicts differ from the published outcome.
 */
function realtimeRunNote(): string {
  const record = recorded<Example01RealRecord>("example-01-real.json").timeout400msRealtimePriority;
  const result = (strategy: string) => record.results.find((candidate) => candidate.strategy === strategy)!;
  for (const { strategy, verdict } of record.results) expect(verdict, `docs/example-01-real.json: ${strategy}`).not.toBe("invalid");
  expect(result("fixed").verdict, "docs/example-01-real.json: fixed retry on the real programs").toBe("collapsed");
  expect(result("exponential-backoff").verdict, "docs/example-01-real.json: backoff on the real programs").toBe("recovered");
  const { before, after } = record.provenance.loadAverage1m;
  return (
    "The same scaling on the real programs, judged and recorded apart from this page's run, so that the page's real " +
    `collapse never rests on one run keeping up: \`${record.recordedBy}\` (docs/example-01-real.json, key timeout400msRealtimePriority, commit ` +
    `${record.provenance.commit.slice(0, 7)}, load average ${before.toFixed(1)} to ${after.toFixed(1)}): \`${record.command}\`` +
    `${record.realtimePriority ? ", the whole demo (server and client) at real-time priority so that the client keeps up on a shared machine; the server then also gets the CPU it needs to admit its backlog" : ""}. ` +
    record.results
      .map(
        ({ strategy, verdict, why, clientWindows, clientWindowsBehind }) =>
          `${strategy}: ${verdict} (${why}), ${clientWindowsBehind} of the client's ${clientWindows} windows marked behind`,
      )
      .join("; ") +
    ". The validation's own real run above must judge every strategy too: a strategy whose client fell behind is run " +
    "once more, and one still not judged fails the validation (the machine was too busy)."
  );
}

/** docs/example-01-real.json's run of the file's 2 s timeout on the real programs and in the simulator, by hand (its commands inside). */
interface TwoSecondScalingRecord {
  readonly provenance: {
    readonly commit: string;
    readonly seed: number;
    readonly loadAverage1m: { readonly before: number; readonly after: number };
  };
  readonly real: {
    readonly verdict: string;
    readonly peakInServiceAfterResume: number;
    readonly clientWindowsBehind: number;
    readonly clientDuringStop: { readonly attemptsPerSecond: number };
    readonly serverWindowsAfterResume: readonly { readonly admitted: number; readonly abandonedTotal: number }[];
  };
  readonly sim: {
    readonly verdict: string;
    readonly tippingPointInService: number;
    readonly inServiceAtEnd: number;
    readonly attemptsPerSecondDuringStop: number;
    readonly inServicePerSecond: readonly { readonly second: number; readonly inService: number }[];
  };
}

/** Why the scaling with the file's 2 s timeout is not the page's: the recorded runs, each figure read from the record. */
function twoSecondScalingNotes(): string[] {
  const { provenance, real, sim } = recorded<{ timeout2s: TwoSecondScalingRecord }>("example-01-real.json").timeout2s;
  expect([real.verdict, sim.verdict], "docs/example-01-real.json timeout2s: real and simulated verdicts").toEqual([
    "recovered",
    "collapsed",
  ]);
  const [, resumed, ...after] = sim.inServicePerSecond.map((second) => second.inService);
  const [first, second] = real.serverWindowsAfterResume;
  return [
    "The real programs run the example scaled down as test/validate/fault-agreement.test.ts does, far from the edge: a " +
      "10 s stop after 10 s and 25 s after it, 200 users thinking 2 s instead of 1000 thinking 10 s (the same 100 requests " +
      "a second) and a 400 ms timeout, with the simulator on the same flags beside them. With 1000 users fixed retry's " +
      "storm made the real client fall behind here (verdict invalid, as it must be; seen, not recorded). With 200 users " +
      "and the file's 2 s timeout (docs/example-01-real.json, key timeout2s) the real server recovers after the stop while " +
      `the simulator, on the same flags and seed ${provenance.seed}, collapses with ${sim.inServiceAtEnd} requests in service.`,
    `Why the 2 s scaling disagrees, measured (docs/example-01-real.json, key timeout2s: both commands, commit ` +
      `${provenance.commit.slice(0, 7)}, seed ${provenance.seed}, load average ${provenance.loadAverage1m.before} to ` +
      `${provenance.loadAverage1m.after}): a difference of model, not a client that fell behind. The real client kept up ` +
      `(${real.clientWindowsBehind} windows marked behind) and sent ${real.clientDuringStop.attemptsPerSecond} attempts a ` +
      `second during the stop against the simulator's ${sim.attemptsPerSecondDuringStop}, so about as many connections wait ` +
      `in the listen backlog at the resume. The simulator takes every one of them into service at the instant of the resume: ` +
      `${resumed} in service a second later, under the tipping point of ${sim.tippingPointInService}; the retries that keep ` +
      `arriving push it over, and it collapses (${after.slice(0, 3).join(", ")} in service the next seconds). The real server ` +
      "spends CPU on each connection (accept, read and parse the request, start its timer) and, sharing two loaded cores, " +
      `took them in over two seconds: ${first!.admitted} admitted in the first second after SIGCONT and ${second!.admitted} in ` +
      `the next, so at most ${real.peakInServiceAfterResume} were in service at once (far under the tipping point) and ` +
      `${second!.abandonedTotal} requests whose clients had gone completed for nobody by 2 s after the resume. This scaling ` +
      "sits at the simulator's edge, where a spread of admissions the simulator does not model (it depends on the CPU the " +
      "server gets) decides the verdict; the 400 ms scaling above is far from it on both sides.",
  ];
}

export async function articleExample(): Promise<ExampleValidation> {
  const file = "01-article-fixed-vs-backoff.yaml";
  const [fixed, backoff] = await runExample(file);
  expect(fixed!.metrics.verdict).toBe("collapsed");
  expect(backoff!.metrics.verdict).toBe("recovered");
  const published = { fixed: "0 (never recovers)", "exponential-backoff": "1 (recovers)" };
  return await validation(
    file,
    [
      { quantity: "fixed: recovered (1) or not (0)", published: published.fixed, theirs: undefined, ours: recovered(fixed!) },
      {
        quantity: "exponential-backoff: recovered (1) or not (0)",
        published: published["exponential-backoff"],
        theirs: undefined,
        ours: recovered(backoff!),
      },
      ...(await expectHealthyWithoutFault(file, "the outage")),
      ...(await realRows(
        file,
        { faults: "stop@10s+10s", observe: "25s", client: { clients: "200", lambda: "2", timeout: "400ms" } },
        published,
      )),
    ],
    [...twoSecondScalingNotes(), realtimeRunNote()],
  );
}

/**
 * The AWS backoff blog's simulator's figures (github.com/aws-samples/aws-arch-backoff-simulator), as
 * scripts/occ-record.ts ran it and recorded them in docs/occ-summary.json beside its commit and seed.
 */
interface OccSummary {
  readonly provenance: { readonly commit: string };
  readonly reference: {
    readonly simulator: string;
    readonly seed: number;
    readonly runs: number;
    readonly figures: readonly {
      readonly clients: number;
      readonly strategy: string;
      readonly writes: number;
      readonly completionMs: number;
    }[];
  };
}

/** The post's published shape at a client count in its sweep, per strategy: work, then time to finish. */
const AWS_BLOG_SHAPE: Readonly<Record<string, readonly [work: string, completion: string]>> = {
  none: ["most: grows fastest with the clients", "not discussed in the text"],
  exponential: ["more than every jittered policy", "far longer than all: left off the time chart"],
  "full-jitter": ["least: below equal and decorrelated jitter", "slightly more than decorrelated, less than equal"],
  "equal-jitter": ["a little more than full jitter", "clearly longer than full jitter"],
  "decorrelated-jitter": ["more than full jitter, far below none", "slightly less than full jitter"],
};

export async function awsBackoffExample(): Promise<ExampleValidation> {
  const file = "02-aws-backoff-jitter.yaml";
  const figures = await runOccExample(file);
  const summary = recorded<OccSummary>("occ-summary.json");
  const clients = figures[0]!.clients;
  const ours = (strategy: string): OccSimFigures => figures.find((figure) => figure.strategy === strategy)!;
  const theirs = (strategy: string) =>
    summary.reference.figures.find((figure) => figure.clients === clients && figure.strategy === strategy)!;
  const [none, exponential, full, equal, decorrelated] = Object.keys(AWS_BLOG_SHAPE).map(ours);
  for (const other of [exponential, full, equal, decorrelated]) expect(none!.writes).toBeGreaterThan(other!.writes);
  for (const jittered of [full, equal, decorrelated]) {
    expect(exponential!.writes).toBeGreaterThan(jittered!.writes);
    expect(exponential!.completionMs).toBeGreaterThan(2 * jittered!.completionMs);
  }
  expect(full!.writes).toBeLessThan(equal!.writes);
  expect(full!.writes).toBeLessThan(decorrelated!.writes);
  expect(equal!.completionMs).toBeGreaterThan(full!.completionMs);
  return await validation(
    file,
    Object.entries(AWS_BLOG_SHAPE).flatMap(([strategy, [work, completion]]) => [
      {
        quantity: `${strategy}: work (writes tried), ${clients} clients`,
        published: work,
        theirs: Math.round(theirs(strategy).writes),
        ours: Math.round(ours(strategy).writes),
      },
      {
        quantity: `${strategy}: time until every write landed, ms`,
        published: completion,
        theirs: Math.round(theirs(strategy).completionMs),
        ours: Math.round(ours(strategy).completionMs),
      },
    ]),
    [
      `Theirs: ${summary.reference.simulator}, ${summary.reference.runs} runs from seed ${summary.reference.seed}, as recorded in ` +
        `docs/occ-summary.json (commit ${summary.provenance.commit.slice(0, 7)}); ours: ${figures[0]!.trials} runs, recomputed here. ` +
        "The two draw their random numbers differently, so they agree within the runs' spread, not to the digit: the largest gap, " +
        "decorrelated jitter's time, is the spread of a maximum over 100 clients averaged over 100 runs; at 10, 50 and 190 " +
        "clients the same policy's times are within 0.2 to 3.5 %, in both directions (docs/occ.md).",
    ],
  );
}

/**
 * Marc Brooker's own simulators (github.com/mbrooker/simulator_example, retry_sim and
 * simple_collapse_sim), as scripts/brooker-python.py ran them, one run per seed, into
 * docs/brooker-python.json (his commit, ours, Python, machine and command inside).
 */
interface BrookerPythonRecord {
  readonly sourceCommit: string;
  readonly commit: string;
  readonly command: string;
  readonly python: string;
  readonly machine: string;
  readonly recoveredBelowConcurrency: number;
  readonly example03: {
    readonly seeds: string;
    readonly settings: Readonly<Record<string, RetryRuns>>;
    /** His token-bucket settings again, his clients fed round robin by one arrival process, as ./sim feeds -instances. */
    readonly roundRobinArrivals: { readonly settings: Readonly<Record<string, RetryRuns>> };
  };
  readonly example04: { readonly seeds: string } & Readonly<Record<SpikeClient, SpikeRuns>>;
  /** docs/simulator.md's sweep over his backoff bases, ten runs in a row from one seed. */
  readonly sweep: { readonly rows: readonly { readonly client: string; readonly recovered: number; readonly runs: number }[] };
}

interface RetryRuns {
  /** Per seed, in seed order: successes, total_calls, unique_calls. */
  readonly perSeed: readonly (readonly [number, number, number])[];
}

type SpikeClient = "no backoff" | "backoff and jitter";

interface SpikeRuns {
  readonly runs: number;
  readonly recovered: number;
  readonly okPerSec50to80PerSeed: readonly number[];
}

const brookerPython = () => recorded<BrookerPythonRecord>("brooker-python.json");

function brookerPythonNote(simulator: string, seeds: string): string {
  const record = brookerPython();
  return (
    `Theirs: his ${simulator} (commit ${record.sourceCommit.slice(0, 7)}), one run per seed (${seeds}), run unchanged by ` +
    `\`${record.command}\` (our commit ${record.commit.slice(0, 7)}, Python ${record.python}, ${record.machine}): the mean of his runs.`
  );
}

/** One figure over several runs: the mean, the sample standard deviation and the number of runs. */
interface Spread {
  readonly mean: number;
  readonly sd: number;
  readonly runs: number;
}

function spreadOf(values: readonly number[]): Spread {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (values.length - 1);
  return { mean, sd: Math.sqrt(variance), runs: values.length };
}

/** Each side's standard deviation of one run, for a row: the agreement bound follows from the two. */
const runSpreads = (ours: Spread, theirs: Spread, digits: number) =>
  `standard deviation of a run: ours ${ours.sd.toFixed(digits)}, theirs ${theirs.sd.toFixed(digits)}`;

const shown = (spread: Spread, digits = 4) => `${spread.mean.toFixed(digits)} ± ${spread.sd.toFixed(digits)}`;

const compared = ({ ours, theirs }: { readonly ours: Spread; readonly theirs: Spread }) =>
  `ours ${shown(ours)}, theirs ${shown(theirs)}, ${gapInStandardErrors(ours, theirs).toFixed(1)} standard errors apart`;

/**
 * How far apart, in standard errors of the difference of the two means, ours and his may be and
 * still be said to agree. At 4, two models that agree fail one figure with a normal tail of
 * 6 in 100 000, so all 36 of example 03 pass by chance alone 99.8 % of the time; wider would let
 * a real gap pass. For example 03 the bound is 0 where both sides are exact in every run (no
 * retries' load is 1) and at most 3.4 % of a figure (breaker, 10 clients at 50 %: about 1000
 * requests a run); for example 04 with backoff and jitter, 0.7 OK/s of 40.
 */
const AGREEMENT_STANDARD_ERRORS = 4;

/** Ours minus theirs in standard errors of the difference of means: ±Infinity where both are exact and differ. */
function gapInStandardErrors(ours: Spread, theirs: Spread): number {
  const gap = ours.mean - theirs.mean;
  const error = Math.sqrt(ours.sd ** 2 / ours.runs + theirs.sd ** 2 / theirs.runs);
  if (error === 0) return Math.abs(gap) < 1e-12 ? 0 : Math.sign(gap) * Number.POSITIVE_INFINITY;
  return gap / error;
}

/** A share of runs as a spread of 0s and 1s: its standard deviation is the binomial one. */
const shareOfRuns = (count: number, runs: number): Spread => spreadOf([...Array(runs).keys()].map((run) => (run < count ? 1 : 0)));

/** Our runs of an example, one per seed from 1, with its overrides. */
async function runSeeds(file: string, seeds: number, overrides: Readonly<Record<string, string | null>>): Promise<StrategyOutcome[][]> {
  const runs: StrategyOutcome[][] = [];
  for (let seed = 1; seed <= seeds; seed++) runs.push(await runExample(file, { ...overrides, seed: String(seed) }));
  return runs;
}

/** Attempts that ended per request that ended: his runs drain what is in flight at the end, ours leaves it out. */
const endedLoad = (outcome: StrategyOutcome) => (outcome.counts.ok + outcome.counts.errors + outcome.counts.timedout) / outcome.requests;

interface RetrySetting {
  readonly key: string;
  readonly clients: number;
  readonly failureRate: number;
  readonly flags: Readonly<Record<string, string>>;
}

const BROOKER_POLICIES: readonly [string, Record<string, string>][] = [
  ["no retries", { "max-attempts": "1" }],
  ["three retries", { "max-attempts": "4" }],
  // His token bucket has no cap of its own on one request's retries.
  ["token bucket", { "max-attempts": "0", budget: "brooker" }],
  ["breaker", { "max-attempts": "4", breaker: "brooker-retry" }],
];

/** His run_sims (100 clients at 10/s) and run_sims_clients (10 or 1000 clients, 100/s in all), at this example's failure rates. */
const BROOKER_RETRY_SETTINGS: readonly RetrySetting[] = [
  ...[0.05, 0.2, 0.5].flatMap((failureRate) =>
    BROOKER_POLICIES.map(([policy, flags]) => ({ key: `${policy}@${failureRate}`, clients: 100, failureRate, flags })),
  ),
  ...(
    [
      [10, 0.2],
      [10, 0.5],
      [1000, 0.2],
    ] as const
  ).flatMap(([clients, failureRate]) =>
    BROOKER_POLICIES.slice(2).map(([policy, flags]) => ({
      key: `${policy}, ${clients} clients@${failureRate}`,
      clients,
      failureRate,
      flags,
    })),
  ),
];

/** Requests a second in all in his runs: 10 per client at 100 clients, 100 otherwise. */
const brookerRate = (clients: number) => (clients === 100 ? 1000 : 100);

/** His seeds' count, and ours: as many, so that each side's spread is measured as well as the other's. */
const RETRY_SEEDS = 30;

/**
 * Where ours and his differ by more than AGREEMENT_STANDARD_ERRORS, measured, and why. The check
 * asserts that each gap is still there (or its note would be false) and that ours agrees, within
 * the same bound, with his code run the way ours differs (the file's roundRobinArrivals); any
 * other gap fails.
 */
const KNOWN_RETRY_GAPS: ReadonlyMap<string, string> = new Map([
  [
    "token bucket@0.5 load",
    "./sim spreads open arrivals over the instances in turn (arrival n to instance n mod 100) where each of his clients " +
      "sends on its own Poisson timer; at 50 % failures each bucket is empty between requests, and how its requests fall " +
      "changes how many retries it affords. His code fed round robin, as ours is",
  ],
]);

/** Success and load of each run, from his per-seed counts. */
function hisRetryFigures(runs: RetryRuns): { success: Spread; load: Spread } {
  return {
    success: spreadOf(runs.perSeed.map(([successes, , unique]) => successes / unique)),
    load: spreadOf(runs.perSeed.map(([, total, unique]) => total / unique)),
  };
}

/**
 * One figure of example 03 judged against his runs (and, for a known gap, his runs fed as ours
 * are): asserted, and a note where they differ.
 */
function judgeRetryFigure(name: string, ours: Spread, theirs: Spread, theirsFedAsOurs: Spread | undefined): string | undefined {
  const gap = gapInStandardErrors(ours, theirs);
  const measured = `ours ${shown(ours)}, theirs ${shown(theirs)} (mean ± standard deviation of ${ours.runs} and ${theirs.runs} runs)`;
  const known = KNOWN_RETRY_GAPS.get(name);
  if (known === undefined) {
    expect(Math.abs(gap), `${name}: ${measured}, ${gap.toFixed(1)} standard errors apart`).toBeLessThanOrEqual(AGREEMENT_STANDARD_ERRORS);
    return undefined;
  }
  expect(Math.abs(gap), `${name}: the known gap closed (${measured}): drop it from KNOWN_RETRY_GAPS`).toBeGreaterThan(
    AGREEMENT_STANDARD_ERRORS,
  );
  const explained = gapInStandardErrors(ours, theirsFedAsOurs!);
  expect(Math.abs(explained), `${name}: ours against his fed as ours: ${compared({ ours, theirs: theirsFedAsOurs! })}`).toBeLessThanOrEqual(
    AGREEMENT_STANDARD_ERRORS,
  );
  return (
    `${name}: ${measured}, ${Math.abs(gap).toFixed(1)} standard errors of the difference apart. ${known} ` +
    `(roundRobinArrivals), gives ${shown(theirsFedAsOurs!)}, ${Math.abs(explained).toFixed(1)} standard errors from ours.`
  );
}

export async function brookerRetryExample(): Promise<ExampleValidation> {
  const file = "03-brooker-token-bucket.yaml";
  const his = brookerPython().example03;
  const published: Record<string, string> = {
    "three retries@0.5 load": "1.875 (1 + p + p² + p³)",
    "three retries@0.5 success": "0.9375 (1 - p⁴)",
    "no retries@0.5 success": "0.5",
  };
  const rows: Row[] = [];
  const notes: string[] = [];
  const gaps: number[] = [];
  const ours = new Map<string, { success: Spread; load: Spread }>();
  for (const { key, clients, failureRate, flags } of BROOKER_RETRY_SETTINGS) {
    // His load: each client on its own Poisson timer for 10 s, each with its own bucket or breaker.
    const overrides = {
      "error-rate": String(failureRate),
      arrivals: "open",
      rate: String(brookerRate(clients)),
      instances: String(clients),
    };
    const runs = (await runSeeds(file, RETRY_SEEDS, { ...overrides, clients: null, lambda: null, duration: "10s", ...flags })).map(only);
    const mine = { success: spreadOf(runs.map(share)), load: spreadOf(runs.map(endedLoad)) };
    const yours = hisRetryFigures(his.settings[key]!);
    const fedAsOurs = his.roundRobinArrivals.settings[key];
    const yoursFedAsOurs = fedAsOurs === undefined ? undefined : hisRetryFigures(fedAsOurs);
    ours.set(key, mine);
    for (const figure of ["success", "load"] as const) {
      const name = `${key} ${figure}`;
      rows.push({
        quantity: `${name}; ${runSpreads(mine[figure], yours[figure], 4)}`,
        published: published[name] ?? "plot",
        theirs: yours[figure].mean,
        ours: mine[figure].mean,
      });
      const note = judgeRetryFigure(name, mine[figure], yours[figure], yoursFedAsOurs?.[figure]);
      if (note === undefined) gaps.push(Math.abs(gapInStandardErrors(mine[figure], yours[figure])));
      else notes.push(note);
    }
  }
  // The published ordering at 50 %: three retries load most, then the bucket, then the breaker and no retries.
  const at = (policy: string) => ours.get(`${policy}@0.5`)!;
  expect(at("three retries").load.mean).toBeGreaterThan(1.8);
  expect(at("token bucket").load.mean).toBeLessThan(1.2);
  expect(at("breaker").load.mean).toBeLessThan(1.05);
  expect(at("token bucket").success.mean).toBeGreaterThan(at("no retries").success.mean);
  return await validation(file, rows, [
    brookerPythonNote("retry_sim", his.seeds) +
      ` Ours: the mean of seeds 1-${RETRY_SEEDS}, each on his load rather than the file's closed clients: open arrivals at ` +
      "his rate, spread over as many client instances as his clients (each with its own bucket or breaker), for his 10 s; " +
      "load counts the attempts of requests that ended, as his drain does. The file's own run (20 s of closed clients, " +
      "`./sim examples/03-brooker-token-bucket.yaml -error-rate 0.2 -max-attempts 0 -budget brooker`) sends more requests " +
      "than his 10 s, over which the 4 retries each bucket starts with count less: its load is lower, as that predicts.",
    `Ours and his agree where the two means are within ${AGREEMENT_STANDARD_ERRORS} standard errors of their difference, ` +
      `the square root of (ours² + theirs²) / ${RETRY_SEEDS} from the standard deviations of a run in each row, measured ` +
      "over both sides' runs here; every figure but those below does, the largest " +
      `gap ${Math.max(...gaps).toFixed(1)} standard errors.`,
    ...notes,
    "At 1000 clients and 100 requests a second in all each of his clients sends its first request at once (about 10 ms) " +
      "and then one every 10 s, so half of his requests come in the first 10 ms; ours spreads them over the 10 s. Their " +
      "figures are the least certain on both sides (about 1000 to 2000 requests a run).",
  ]);
}

/** OK per second over the windows that end after `fromMs`. */
function okPerSecAfter(outcome: StrategyOutcome, fromMs: number): number {
  const windows = outcome.windows.filter((window) => window.startMs >= fromMs);
  const ok = windows.reduce((sum, window) => sum + window.okPerSec * (window.endMs - window.startMs), 0);
  return ok / windows.reduce((sum, window) => sum + (window.endMs - window.startMs), 0);
}

/** His runs' count, and ours: a share of runs recovered needs about 100 to be told from another 20 points away. */
const SPIKE_SEEDS = 100;

/** Both sides' runs of one of example 04's clients: OK/s over 50-80 s and the share of runs recovered. */
interface SpikeComparison {
  readonly okPerSec: { readonly ours: Spread; readonly theirs: Spread };
  readonly recovered: { readonly ours: Spread; readonly theirs: Spread };
}

function spikeComparison(ours: readonly StrategyOutcome[], theirs: SpikeRuns): SpikeComparison {
  return {
    okPerSec: { ours: spreadOf(ours.map((outcome) => okPerSecAfter(outcome, 50_000))), theirs: spreadOf(theirs.okPerSec50to80PerSeed) },
    recovered: { ours: spreadOf(ours.map(recovered)), theirs: shareOfRuns(theirs.recovered, theirs.runs) },
  };
}

function spikeRows(
  client: SpikeClient,
  published: { readonly okPerSec: string; readonly recovered: string },
  compared: SpikeComparison,
): Row[] {
  const { okPerSec, recovered: back } = compared;
  return [
    {
      quantity: `${client}: OK/s, 50-80 s, mean of ${okPerSec.ours.runs} runs; ${runSpreads(okPerSec.ours, okPerSec.theirs, 2)}`,
      published: published.okPerSec,
      theirs: okPerSec.theirs.mean,
      ours: okPerSec.ours.mean,
    },
    {
      quantity: `${client}: runs recovered, of ${back.ours.runs}`,
      published: published.recovered,
      theirs: Math.round(back.theirs.mean * back.theirs.runs),
      ours: Math.round(back.ours.mean * back.ours.runs),
    },
  ];
}

export async function brookerCollapseExample(): Promise<ExampleValidation> {
  const file = "04-brooker-collapse.yaml";
  const his = brookerPython().example04;
  const runs = await runSeeds(file, SPIKE_SEEDS, { interval: "5s" });
  const noBackoff = spikeComparison(
    runs.map(([fixed]) => fixed!),
    his["no backoff"],
  );
  const jitter = spikeComparison(
    runs.map(([, fullJitter]) => fullJitter!),
    his["backoff and jitter"],
  );
  // With backoff and jitter both recover, at the offered load: agreement both ways.
  for (const figure of [jitter.okPerSec, jitter.recovered]) {
    expect(Math.abs(gapInStandardErrors(figure.ours, figure.theirs)), `backoff and jitter: ${compared(figure)}`).toBeLessThanOrEqual(
      AGREEMENT_STANDARD_ERRORS,
    );
  }
  // Without backoff his server recovers in some runs and ours in none (see the note): ours may not recover more often
  // nor serve more than his runs allow; it fails where ours recovered as his does not.
  for (const figure of [noBackoff.okPerSec, noBackoff.recovered]) {
    expect(gapInStandardErrors(figure.ours, figure.theirs), `no backoff: ${compared(figure)}`).toBeLessThanOrEqual(
      AGREEMENT_STANDARD_ERRORS,
    );
  }
  const gap = gapInStandardErrors(noBackoff.recovered.ours, noBackoff.recovered.theirs);
  const sweepNoBackoff = brookerPython().sweep.rows.find((row) => row.client === "no backoff")!;
  const rows = [
    ...spikeRows("no backoff", { okPerSec: "stays down", recovered: "stays down" }, noBackoff),
    ...spikeRows("backoff and jitter", { okPerSec: "40 (the offered load)", recovered: "recovers" }, jitter),
    ...(await expectHealthyWithoutFault(file, "the spike", { interval: "5s" })),
  ];
  const real = await realRows(
    file,
    { faults: "spike@10s+5s*2", observe: "40s", strategies: "full-jitter" },
    { "full-jitter": "1 (recovers)" },
  );
  return await validation(
    file,
    [...rows, ...real],
    [
      "The post's own text was not at hand here: the published outcome is read from his simulator's spike runs, run here.",
      brookerPythonNote("simple_collapse_sim", his.seeds) +
        ` Ours: seeds 1-${SPIKE_SEEDS}. A run recovered where the server ends it under the ${brookerPython().recoveredBelowConcurrency} ` +
        "requests in service at which its time alone reaches the 3 s timeout (ours: the verdict, the same test of its server).",
      `Without backoff the two differ: his server recovers in ${(noBackoff.recovered.theirs.mean * 100).toFixed(0)} % of his runs ` +
        `(binomial standard error ${((noBackoff.recovered.theirs.sd / Math.sqrt(SPIKE_SEEDS)) * 100).toFixed(1)} points; in docs/simulator.md's ` +
        `${sweepNoBackoff.runs} runs from one seed, ${sweepNoBackoff.recovered}), ours in ${(noBackoff.recovered.ours.mean * 100).toFixed(0)} % of ours, ${Math.abs(gap).toFixed(1)} standard ` +
        `errors apart; his OK/s over 50-80 s is ${shown(noBackoff.okPerSec.theirs, 1)} (0 in a collapsed run, about 40 in a ` +
        `recovered one), ours ${shown(noBackoff.okPerSec.ours, 1)}. Both stay down in most runs, as published. docs/simulator.md ` +
        "('The anchors, reproduced') traces the difference to the servers: his fixes each request's time when it arrives, " +
        "ours re-evaluates it as the concurrency changes, so a lull that sometimes saves his does not save ours. The check asserts that ours recovers and serves " +
        `no more than his runs allow (at most ${AGREEMENT_STANDARD_ERRORS} standard errors above his).`,
      `With backoff and jitter his server recovers in ${his["backoff and jitter"].recovered} of ${SPIKE_SEEDS} runs and ours in ` +
        `${Math.round(jitter.recovered.ours.mean * SPIKE_SEEDS)}, and ours agrees with his within ${AGREEMENT_STANDARD_ERRORS} ` +
        `standard errors of the difference of means, the square root of (ours² + theirs²) / ${SPIKE_SEEDS} from the ` +
        `standard deviations of a run in its row: ${compared(jitter.okPerSec)}.`,
      "On the real programs only backoff and jitter runs from this file: the demo passes the file's parameters of full jitter " +
        "(-min-delay, -max-delay) to every strategy's client, and ./client refuses them for fixed, where ./sim leaves a " +
        "strategy's parameters out of the strategies that do not read them. The spike is a second ./client at the same rate.",
    ],
  );
}

export async function openClosedExample(): Promise<ExampleValidation> {
  const file = "05-brooker-open-closed.yaml";
  const closed = only(await runExample(file));
  const open = only(await runExample(file, { arrivals: "open", rate: "8", clients: null, lambda: null }));
  const openSeed2 = only(await runExample(file, { arrivals: "open", rate: "8", clients: null, lambda: null, seed: "2" }));
  const closedSeed2 = only(await runExample(file, { seed: "2" }));
  const openP99 = open.latency!.p99Ms / 1000;
  const closedP99 = closed.latency!.p99Ms / 1000;
  expect(openP99 / closedP99).toBeGreaterThan(4);
  const analytic = { open: Math.log(100) / 2, closed: 0.1 * Math.log(100) };
  return await validation(
    file,
    [
      { quantity: "open: p99, s", published: analytic.open.toFixed(4), theirs: undefined, ours: openP99 },
      { quantity: "closed, 1 client: p99, s", published: analytic.closed.toFixed(4), theirs: undefined, ours: closedP99 },
      {
        quantity: "open p99 / closed p99",
        published: (analytic.open / analytic.closed).toFixed(4),
        theirs: undefined,
        ours: openP99 / closedP99,
      },
    ],
    [
      `Ours is within 3 % of the M/M/1 figures. One hour of virtual time holds about ${open.requests} requests, so about ` +
        `${Math.round(open.requests / 100)} lie past the p99; with seed 2 the open p99 is ${(openSeed2.latency!.p99Ms / 1000).toFixed(4)} s ` +
        `and the closed one ${(closedSeed2.latency!.p99Ms / 1000).toFixed(4)} s: the seeds differ by as much as ours differs from the formula.`,
    ],
  );
}

export async function metastableExample(): Promise<ExampleValidation> {
  const file = "06-metastable-capacity-cut.yaml";
  const ten = only(await runExample(file, { interval: "10s" }));
  const nine = only(await runExample(file, { interval: "10s", faults: "capacity@30s+9s*0.4" }));
  expect(ten.metrics.verdict).toBe("collapsed");
  expect(nine.metrics.verdict).toBe("recovered");
  return await validation(file, [
    { quantity: "10 s cut to 40 %: recovered (1) or not (0)", published: "0 (metastable)", theirs: undefined, ours: recovered(ten) },
    ...(await expectHealthyWithoutFault(file, "the capacity cut", { interval: "10s" })),
    { quantity: "9 s cut to 40 %: recovered (1) or not (0)", published: "1 (recovers)", theirs: undefined, ours: recovered(nine) },
    { quantity: "10 s cut: OK/s in the last minute", published: "0", theirs: undefined, ours: okPerSecAfter(ten, 90_000) },
    {
      quantity: "9 s cut: OK/s in the last minute",
      published: "about 220 (the offered load)",
      theirs: undefined,
      ours: okPerSecAfter(nine, 90_000),
    },
  ]);
}

/** Attempts per second over the failure (5 s to 5.5 s) relative to the requests offered (1000/s). */
export function amplificationDuring(outcome: StrategyOutcome): number {
  const windows = outcome.windows.filter((window) => window.startMs >= 5_000 && window.endMs <= 5_500);
  return windows.reduce((sum, window) => sum + window.attemptsPerSec, 0) / windows.length / 1000;
}

/** Attempts per offered request in each window of the failure. */
function ramp(outcome: StrategyOutcome): string {
  return outcome.windows
    .filter((window) => window.startMs >= 5_000 && window.endMs <= 5_500)
    .map((window) => (window.attemptsPerSec / 1000).toFixed(2))
    .join(", ");
}

/** Yandex's simulator (github.com/jirfag/simulations), as scripts/yandex-record.py recorded it (docs/yandex-simulations.json). */
interface YandexRecord {
  readonly sourceCommit: string;
  readonly commit: string;
  readonly seeds: readonly number[];
  readonly cpus: number;
  readonly simpy: string;
  readonly rows: readonly { readonly failure: string; readonly strategy: string; readonly loadDuring: number }[];
}

export async function yandexExample(): Promise<ExampleValidation> {
  const file = "07-yandex-good-retry-bad-retry.yaml";
  const record = recorded<YandexRecord>("yandex-simulations.json");
  const theirs = (failure: string, name: string) => record.rows.find((row) => row.failure === failure && row.strategy === name)?.loadDuring;
  const policies: readonly [string, Record<string, string>][] = [
    ["no retries", { "max-attempts": "1" }],
    ["retry-2x", {}],
    ["retry budget 10 %", { budget: "yandex" }],
    ["retry breaker 10 %", { breaker: "yandex-retry" }],
  ];
  const outage = new Map<string, StrategyOutcome>();
  const partial = new Map<string, StrategyOutcome>();
  for (const [name, flags] of policies) {
    outage.set(name, only(await runExample(file, flags)));
    partial.set(name, only(await runExample(file, { ...flags, faults: "errors@5s+500ms*0.3" })));
  }
  const during = (name: string) => amplificationDuring(outage.get(name)!);
  const unbounded = only(await runExample(file, { threads: "1000" }));
  expect(during("retry-2x")).toBeGreaterThan(2);
  expect(during("retry budget 10 %")).toBeLessThan(1.2);
  expect(during("retry breaker 10 %")).toBeLessThan(1.1);
  const partialRow = (name: string, published: string): Row[] => {
    const outcome = partial.get(name)!;
    return [
      { quantity: `30 % errors, ${name}: load during`, published, theirs: theirs("30 % errors", name), ours: amplificationDuring(outcome) },
    ];
  };
  const ceiling = (record.cpus / 10.3) * 1000;
  return await validation(
    file,
    [
      ...policies.map(([name]) => ({
        quantity: `full outage, ${name}: load during (attempts / offered)`,
        published: { "no retries": "1", "retry-2x": "3 (their rules)", "retry budget 10 %": "near 1", "retry breaker 10 %": "near 1" }[
          name
        ]!,
        theirs: theirs("full outage", name),
        ours: during(name),
      })),
      ...partialRow("retry-2x", "1.39 (their rules: 1 + .3 + .09)"),
      ...partialRow("retry budget 10 %", "near 1"),
      ...partialRow("retry breaker 10 %", "near 1"),
    ],
    [
      `Theirs: github.com/jirfag/simulations (commit ${record.sourceCommit.slice(0, 7)}), their "retry_cb_or_budget_vs_exp_backoff" ` +
        `and its "_partial_failure" (a 1.5 s run, failing from 0.5 s to 1.0 s), the mean of seeds ${record.seeds.join(", ")}, run ` +
        `here by scripts/yandex-record.py into docs/yandex-simulations.json (our commit ${record.commit.slice(0, 7)}): their ` +
        `simulator, server, client and strategies unchanged; their simpy 4.0.1 pin replaced by simpy ${record.simpy} from source ` +
        "(no Python package index here; Debian's python3-simpy is SimPy 2, another API), numpy's lognormal by Python's. Their load " +
        "is the requests the server finished during the failure, as their chart's relative server RPS; ours the attempts sent.",
      `retry-2x during the full outage, theirs ${theirs("full outage", "retry-2x")!.toFixed(2)} against ours ` +
        `${during("retry-2x").toFixed(2)}: their figure counts what ${record.cpus} CPUs of 10.3 ms finish, at most ` +
        `${Math.round(ceiling)} a second (${(ceiling / 1000).toFixed(2)}x), and reaches ` +
        `${Math.round((100 * theirs("full outage", "retry-2x")!) / (ceiling / 1000))} % of that ceiling; ours counts attempts sent, ` +
        "which the CPUs do not cap. Attempts / offered per 100 ms from 5.0 s: " +
        ramp(outage.get("retry-2x")!) +
        "; the same run with 1000 CPUs instead of 22: " +
        ramp(unbounded) +
        ` (mean ${amplificationDuring(unbounded).toFixed(2)}). Most of our shortfall from 3 is the CPUs': three attempts of 10.3 ms ` +
        "for each of 1000 requests a second need 31 CPUs, so the queue grows through the failure, each attempt lasts longer than " +
        "the last and the retries lag the arrivals. The rest is the ratio's own: it divides by the nominal 1000 a second, while " +
        "a 100 ms window holds a Poisson count of arrivals, 100 ± 10.",
    ],
  );
}

/** Stability Sim's engine (github.com/marcbrooker/stability-sim), as scripts/stability-sim-record.ts recorded it. */
interface StabilitySimRecord {
  readonly provenance: { readonly commit: string };
  readonly simulatorCommit: string;
  readonly figures: {
    readonly "metastable-retry": { readonly seed: number; readonly okPerSecAfter30s: number; readonly noRetriesOkPerSecAfter30s: number };
    readonly "timeout-cascade": {
      readonly seed: number;
      readonly seconds: number;
      readonly windowsWithTimeoutsShare: number;
      readonly timedOutShare: number;
      readonly otherSeeds: readonly { readonly seed: number; readonly timedOutShare: number }[];
      readonly at90PerSec: readonly { readonly seed: number; readonly timedOutShare: number }[];
    };
    readonly "gc-death-spiral": {
      readonly seed: number;
      readonly okPerSecAfter30s: number;
      readonly noBurstOkPerSecAfter30s: number;
      readonly noRetriesOkPerSecAfter30s: number;
      readonly okPerSecFirst3s: readonly number[];
      readonly byRate: readonly { readonly rate: number; readonly okPerSecAfter30s: number; readonly withBurst: number }[];
    };
    readonly "goodput-collapse": {
      readonly seed: number;
      readonly okPerSecAfter20s: number;
      readonly servedPerSecAfter20s: number;
      readonly queueAt16s: number;
      readonly firstSecondOkAfter16s: number | null;
      readonly otherSeeds: readonly { readonly seed: number; readonly queueAt16s: number; readonly firstSecondOkAfter16s: number | null }[];
      readonly firstSecondOkAfter16sIn120s: readonly (number | null)[];
      readonly noSpikeOkPerSecAfter20s: number;
    };
  };
}

const stabilitySim = () => recorded<StabilitySimRecord>("stability-sim.json");

/** Where Stability Sim's figures come from, for each of its examples' notes. */
function stabilitySimNote(example: string): string {
  const record = stabilitySim();
  const seed = record.figures[example as keyof StabilitySimRecord["figures"]].seed;
  return (
    `Theirs: Stability Sim's own engine (commit ${record.simulatorCommit.slice(0, 7)}), its example "${example}" from its ` +
    `src/examples/index.ts at its seed ${seed}, run headless under node by scripts/stability-sim-record.ts into ` +
    `docs/stability-sim.json (our commit ${record.provenance.commit.slice(0, 7)}); its engine needs no browser, only its web ` +
    "worker's message loop does."
  );
}

export async function stabilitySimExample(): Promise<ExampleValidation> {
  const file = "08-stability-sim-retry-storm.yaml";
  const theirs = stabilitySim().figures["metastable-retry"];
  const retries = only(await runExample(file, { interval: "5s" }));
  const none = only(await runExample(file, { interval: "5s", "max-attempts": "1" }));
  expect(retries.metrics.verdict).toBe("collapsed");
  expect(none.metrics.verdict).not.toBe("collapsed");
  return await validation(
    file,
    [
      {
        quantity: "fixed-3 retries: OK/s after 30 s",
        published: "0 (metastable)",
        theirs: theirs.okPerSecAfter30s,
        ours: okPerSecAfter(retries, 30_000),
      },
      {
        quantity: "no retries: OK/s after 30 s",
        published: "70 (recovers)",
        theirs: theirs.noRetriesOkPerSecAfter30s,
        ours: okPerSecAfter(none, 30_000),
      },
      ...(await expectHealthyWithoutFault(file, "the crash", { interval: "5s" })),
    ],
    [
      stabilitySimNote("metastable-retry"),
      "Its other examples (cache, database pool, least-connections balancer) need components our models lack.",
    ],
    42,
  );
}

/** The share of reporting windows in which some request timed out. */
export function degradedShare(outcome: StrategyOutcome): number {
  return outcome.windows.filter((window) => window.timedoutPerSec > 0).length / outcome.windows.length;
}

/** Seeds 1 to `count`, as flags' values. */
const seedsUpTo = (count: number) => Array.from({ length: count }, (_, index) => String(index + 1));

/** A figure's mean over runs of different seeds and its standard error. */
function meanOverSeeds(values: readonly number[]): { readonly mean: number; readonly error: number } {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (values.length - 1);
  return { mean, error: Math.sqrt(variance / values.length) };
}

/**
 * Asserts that ours and theirs agree in the mean over seeds: within 3 standard errors of the
 * difference of the two means, from the spread each engine measured over its seeds, and no
 * wider. Returns the comparison in a sentence for the page.
 */
function expectSameMean(what: string, ours: readonly number[], theirs: readonly number[], digits: number): string {
  const [mine, other] = [meanOverSeeds(ours), meanOverSeeds(theirs)];
  const bound = 3 * Math.sqrt(mine.error ** 2 + other.error ** 2);
  // Up to a dozen runs are listed; more by their range.
  const listed = (values: readonly number[]) =>
    values.length <= 12
      ? values.map((value) => value.toFixed(digits)).join(", ")
      : `${Math.min(...values).toFixed(digits)} to ${Math.max(...values).toFixed(digits)}`;
  const sentence =
    `${what}: ours ${listed(ours)} (mean ${mine.mean.toFixed(digits)}, ${ours.length} seeds), theirs ${listed(theirs)} ` +
    `(mean ${other.mean.toFixed(digits)}, ${theirs.length} seeds); the means differ by ${Math.abs(mine.mean - other.mean).toFixed(digits)}, ` +
    `asserted at most 3 standard errors of their difference, ${bound.toFixed(digits)}.`;
  expect(Math.abs(mine.mean - other.mean), sentence).toBeLessThanOrEqual(bound);
  return sentence;
}

/** The example's seed (theirs first) and its other recorded seeds, in the order of their figures. */
const recordedSeeds = (figures: { readonly seed: number; readonly otherSeeds: readonly { readonly seed: number }[] }) => [
  figures.seed,
  ...figures.otherSeeds.map(({ seed }) => seed),
];

export async function timeoutCascadeExample(): Promise<ExampleValidation> {
  const file = "09-stability-sim-timeout-cascade.yaml";
  const theirs = stabilitySim().figures["timeout-cascade"];
  const minute = async (overrides: Record<string, string>) =>
    only(await runExample(file, { duration: `${theirs.seconds}s`, ...overrides }));
  const timedOut = (run: StrategyOutcome) => run.counts.timedout / (run.requests || 1);
  const theirsFull = [theirs.timedOutShare, ...theirs.otherSeeds.map(({ timedOutShare }) => timedOutShare)];
  const theirsBelow = theirs.at90PerSec.map(({ timedOutShare }) => timedOutShare);
  const oursFull: number[] = [];
  for (const seed of seedsUpTo(theirsFull.length)) oursFull.push(timedOut(await minute({ seed })));
  // The trigger is full utilisation: the same server 90 % busy, seed for seed.
  const oursBelow: number[] = [];
  for (const seed of seedsUpTo(theirsBelow.length)) oursBelow.push(timedOut(await minute({ seed, rate: "90" })));
  const atFull = expectSameMean(`Requests timed out in ${theirs.seconds} s at 100 % busy`, oursFull, theirsFull, 4);
  const atNinety = expectSameMean("The same at 90 % busy (90 requests a second)", oursBelow, theirsBelow, 5);
  const [full, below] = [meanOverSeeds(oursFull).mean, meanOverSeeds(oursBelow).mean];
  // At 90 % both engines time out under 0.05 % of requests, at 100 % about 25 % (the records): a hundredth separates them.
  expect(below, "timed out at 90 % busy against 100 %").toBeLessThan(full / 100);
  const first = await minute({ seed: "1" });
  return await validation(
    file,
    [
      {
        quantity: `requests timed out, share, first ${theirs.seconds} s, mean of ${theirsFull.length} seeds`,
        published: "bursts, no fault",
        theirs: meanOverSeeds(theirsFull).mean,
        ours: full,
      },
      {
        quantity: `the same at 90 % busy (the trigger below its threshold), mean of ${theirsBelow.length} seeds`,
        published: "not published (healthy)",
        theirs: meanOverSeeds(theirsBelow).mean,
        ours: below,
      },
      {
        quantity: `1 s windows with timeouts, share, first ${theirs.seconds} s, one seed each`,
        published: "some, not all (oscillates)",
        theirs: theirs.windowsWithTimeoutsShare,
        ours: degradedShare(first),
      },
    ],
    [
      stabilitySimNote("timeout-cascade"),
      `At exactly full utilisation the queue is a random walk with no pull back: a minute holds a few of its excursions, so one ` +
        "seed's minute differs from another's far more than the two engines do, and only means over many seeds can be compared. " +
        `${atFull} ${atNinety} Theirs at the example's seed ${theirs.seed} and seeds 1 to ${theirs.otherSeeds.length} ` +
        `(100 %), 1 to ${theirs.at90PerSec.length} (90 %); ours at seeds 1 up (the two engines draw differently anyway).`,
    ],
  );
}

/** The GC example with some of its flags overridden (a lower steady rate, no burst, no retries). */
async function gcRun(overrides: Record<string, string | null>): Promise<StrategyOutcome> {
  return only(await runExample("10-stability-sim-gc-death-spiral.yaml", overrides));
}

/** A spike of 100 ms that adds 100 requests to a steady `rate` a second, as their burst of 100 at 10 s. */
const gcBurst = (rate: number) => `spike@10s+100ms*${1 + 100 / (rate * 0.1)}`;

/** The steady rate at which ours holds without the burst at every seed (the page shows the rates above it, seed by seed). */
const GC_HOLDING_RATE = 10;
const GC_SEEDS = ["42", ...seedsUpTo(4)];

/** A steady rate's floor for "holds": the offered rate less 3 Poisson standard deviations of 30 s of arrivals. */
const gcFloor = (rate: number) => rate - 3 * Math.sqrt(rate / 30);

/** Of GC_SEEDS, how many hold at `rate` without the burst (OK/s after 30 s at least its floor). */
async function gcSeedsHolding(rate: number): Promise<number> {
  let holding = 0;
  for (const seed of GC_SEEDS) {
    if (okPerSecAfter(await gcRun({ rate: String(rate), seed, ...NO_FAULT }), 30_000) >= gcFloor(rate)) holding++;
  }
  return holding;
}

/** Above GC_HOLDING_RATE, how many of GC_SEEDS hold without the burst at each rate, for the page. */
async function gcHoldingAbove(): Promise<{ readonly rate: number; readonly seeds: number }[]> {
  const holding: { rate: number; seeds: number }[] = [];
  for (const rate of [15, 20, 30]) holding.push({ rate, seeds: await gcSeedsHolding(rate) });
  return holding;
}

/**
 * The trigger at GC_HOLDING_RATE, seed for seed: without the burst ours answers the offered rate
 * (no lower than gcFloor), with it nothing. Returns each seed's figure for the page.
 */
async function expectGcTriggerMatters(): Promise<{ readonly steady: number[]; readonly spiked: number[] }> {
  const steady: number[] = [];
  const spiked: number[] = [];
  const floor = gcFloor(GC_HOLDING_RATE);
  for (const seed of GC_SEEDS) {
    const rate = String(GC_HOLDING_RATE);
    steady.push(okPerSecAfter(await gcRun({ rate, seed, ...NO_FAULT }), 30_000));
    spiked.push(okPerSecAfter(await gcRun({ rate, seed, faults: gcBurst(GC_HOLDING_RATE) }), 30_000));
    expect(steady.at(-1), `GC example at ${rate}/s without the burst, seed ${seed}: OK/s after 30 s`).toBeGreaterThanOrEqual(floor);
    expect(spiked.at(-1), `GC example at ${rate}/s with the burst, seed ${seed}: OK/s after 30 s`).toBe(0);
  }
  return { steady, spiked };
}

export async function gcDeathSpiralExample(): Promise<ExampleValidation> {
  const file = "10-stability-sim-gc-death-spiral.yaml";
  const theirs = stabilitySim().figures["gc-death-spiral"];
  const burst = await gcRun({});
  const noBurst = await gcRun(NO_FAULT);
  const noRetries = await gcRun({ "max-attempts": "1" });
  expect(okPerSecAfter(burst, 30_000)).toBe(0);
  expect(okPerSecAfter(noRetries, 30_000)).toBe(0);
  // At the published 80/s ours spirals without the burst too, as theirs does (the page says so): the trigger is tested below.
  expect(okPerSecAfter(noBurst, 30_000)).toBe(0);
  const trigger = await expectGcTriggerMatters();
  const holding = await gcHoldingAbove();
  const firstSeconds = (outcome: StrategyOutcome) => outcome.windows.slice(0, 3).reduce((sum, window) => sum + window.okPerSec, 0) / 3;
  const byRate: Row[] = [];
  for (const { rate, okPerSecAfter30s, withBurst } of theirs.byRate) {
    const steady = await gcRun({ rate: String(rate), ...NO_FAULT });
    const spiked = await gcRun({ rate: String(rate), faults: gcBurst(rate) });
    byRate.push(
      {
        quantity: `steady ${rate}/s, no burst: OK/s after 30 s`,
        published: "not published",
        theirs: okPerSecAfter30s,
        ours: okPerSecAfter(steady, 30_000),
      },
      {
        quantity: `steady ${rate}/s, burst of 100 at 10 s: OK/s after 30 s`,
        published: "0 (the burst tips it)",
        theirs: withBurst,
        ours: okPerSecAfter(spiked, 30_000),
      },
    );
  }
  const listed = (values: readonly number[]) => values.map((value) => value.toFixed(2)).join(", ");
  return await validation(
    file,
    [
      {
        quantity: "80/s, burst at 10 s: OK/s after 30 s",
        published: "0 (cannot recover)",
        theirs: theirs.okPerSecAfter30s,
        ours: okPerSecAfter(burst, 30_000),
      },
      {
        quantity: "80/s, no retries: OK/s after 30 s",
        published: "not published",
        theirs: theirs.noRetriesOkPerSecAfter30s,
        ours: okPerSecAfter(noRetries, 30_000),
      },
      {
        quantity: "80/s, no burst: OK/s after 30 s",
        published: "not published (the burst is the trigger)",
        theirs: theirs.noBurstOkPerSecAfter30s,
        ours: okPerSecAfter(noBurst, 30_000),
      },
      {
        quantity: "80/s: OK/s in the first 3 s",
        published: "not published (healthy before the burst)",
        theirs: theirs.okPerSecFirst3s.reduce((sum, ok) => sum + ok, 0) / 3,
        ours: firstSeconds(burst),
      },
      ...byRate,
    ],
    [
      stabilitySimNote("gc-death-spiral"),
      `The published outcome holds in both engines: after 30 s nothing is answered in time, with or without retries. Its trigger ` +
        `does not: at the published 80/s both spiral before the burst at 10 s, theirs in its first seconds (` +
        `${theirs.okPerSecFirst3s.join(", ")} OK in seconds 1 to 3, then 10 requests in service for good), ours from the first ` +
        "second. Below 80/s their server holds until the burst and then spirals, the published story, at every rate of the rows " +
        `by rate; ours, without the burst, holds at ${holding.map(({ rate, seeds }) => `${rate}/s at ${seeds}`).join(", ")} of ` +
        `seeds ${GC_SEEDS.join(", ")} (OK/s after 30 s at least the rate less 3 Poisson standard deviations): one delay shared by every request ` +
        "in service, re-evaluated as their number changes (the article's server), means one more request postpones all of " +
        "them, so a few close arrivals on this steep a curve (e^0.4 per request) start the spiral; theirs fixes each request's " +
        "time as it starts and keeps at most 10 in service, so a later arrival slows only itself. The rows by rate measure it.",
      `The trigger, tested where ours holds: at ${GC_HOLDING_RATE}/s, seeds ${GC_SEEDS.join(", ")}, OK/s after 30 s without the ` +
        `burst ${listed(trigger.steady)} (asserted no lower than ${GC_HOLDING_RATE} less 3 Poisson standard deviations of 30 s ` +
        `of arrivals, ${gcFloor(GC_HOLDING_RATE).toFixed(2)}), with it ${listed(trigger.spiked)} ` +
        "(asserted 0).",
    ],
    42,
  );
}

/** The server's report at `atMs` (one a second). */
const serverAt = (outcome: StrategyOutcome, atMs: number) => outcome.server.find((sample) => sample.atMs >= atMs)!;

/** The first second after the spike (8-16 s) in which half of the offered 90/s was answered in time; null: none in the run. */
export function firstHealthySecond(outcome: StrategyOutcome): number | null {
  const window = outcome.windows.find((candidate) => candidate.startMs >= 16_000 && candidate.okPerSec >= 45);
  return window === undefined ? null : window.endMs / 1000;
}

/** Long enough that every seed's backlog has drained on both sides (theirs took up to 81 s, ours 59 s). */
const GOODPUT_RUN_S = 120;
/**
 * Of the offered 90/s without the spike, the least answered from 20 s on: below every seed
 * measured (ours 83.8 to 91.5 over seeds 1 to 9 and 271828, theirs 88.0), far above the spike's 18.2.
 */
const GOODPUT_NO_SPIKE_FLOOR = 0.9 * 90;

export async function goodputCollapseExample(): Promise<ExampleValidation> {
  const file = "11-stability-sim-goodput-collapse.yaml";
  const theirs = stabilitySim().figures["goodput-collapse"];
  const outcome = only(await runExample(file));
  const fromMs = 20_000;
  const endMs = outcome.server.at(-1)!.atMs;
  const abandonedAfter = (serverAt(outcome, endMs).abandoned! - serverAt(outcome, fromMs).abandoned!) / ((endMs - fromMs) / 1000);
  const goodput = okPerSecAfter(outcome, fromMs);
  expect(goodput + abandonedAfter).toBeGreaterThan(85);
  const seeds = recordedSeeds(theirs);
  const runs: StrategyOutcome[] = [];
  for (const seed of seeds) runs.push(only(await runExample(file, { seed: String(seed), duration: `${GOODPUT_RUN_S}s` })));
  const oursFirst = runs.map(firstHealthySecond);
  expect(oursFirst, `every seed's backlog drained within ${GOODPUT_RUN_S} s`).not.toContain(null);
  expect(theirs.firstSecondOkAfter16sIn120s, `theirs: every seed drained within ${GOODPUT_RUN_S} s`).not.toContain(null);
  const recovery = expectSameMean(
    `The first second after the spike with half the offered load answered in time, ${GOODPUT_RUN_S} s runs`,
    oursFirst as number[],
    theirs.firstSecondOkAfter16sIn120s as number[],
    1,
  );
  const oursQueues = runs.map((run) => serverAt(run, 16_000).queueLength!);
  const backlog = expectSameMean(
    "Requests waiting at 16 s",
    oursQueues,
    [theirs.queueAt16s, ...theirs.otherSeeds.map((o) => o.queueAt16s)],
    0,
  );
  // The trigger: without the latency spike the same server answers about what is offered.
  const noSpike = okPerSecAfter(only(await runExample(file, NO_FAULT)), fromMs);
  expect(noSpike, "OK/s from 20 s without the spike").toBeGreaterThanOrEqual(GOODPUT_NO_SPIKE_FLOOR);
  expect(theirs.noSpikeOkPerSecAfter20s, "theirs: OK/s from 20 s without the spike").toBeGreaterThanOrEqual(GOODPUT_NO_SPIKE_FLOOR);
  const within60 = (firsts: readonly (number | null)[]) => firsts.filter((second) => second !== null && second <= 60).length;
  return await validation(
    file,
    [
      { quantity: "OK/s from 20 s to the end (60 s)", published: "0 (zero goodput)", theirs: theirs.okPerSecAfter20s, ours: goodput },
      {
        quantity: "requests served a second from 20 s, answered or not",
        published: "about 100 (full speed)",
        theirs: theirs.servedPerSecAfter20s,
        ours: goodput + abandonedAfter,
      },
      {
        quantity: "requests waiting at 16 s, the spike's end",
        published: "about 450",
        theirs: theirs.queueAt16s,
        ours: serverAt(outcome, 16_000).queueLength!,
      },
      {
        quantity: `first second with half the offered load answered in time, mean of ${seeds.length} seeds, ${GOODPUT_RUN_S} s runs`,
        published: "after 60 s (about 45 s of drain)",
        theirs: meanOverSeeds(theirs.firstSecondOkAfter16sIn120s as number[]).mean,
        ours: meanOverSeeds(oursFirst as number[]).mean,
      },
      {
        quantity: "no latency spike (the trigger removed): OK/s from 20 s to 60 s",
        published: "not published (90, the offered load)",
        theirs: theirs.noSpikeOkPerSecAfter20s,
        ours: noSpike,
      },
    ],
    [
      stabilitySimNote("goodput-collapse"),
      "The backlog drains at the difference of two Poisson counts, 100 served and 90 arriving a second: over 40 s that is " +
        "400 ± 87 requests, so whether a backlog of about 450 is gone before 60 s is the seed's. " +
        `${recovery} ${backlog} Seeds ${seeds.join(", ")} on both sides. Within the published 60 s, ours recovers at ` +
        `${within60(oursFirst)} of ${seeds.length} seeds and theirs at ${within60(theirs.firstSecondOkAfter16sIn120s)}: the ` +
        "example's seed shows no recovery by 60 s on theirs and one at " +
        `${oursFirst[0]} s on ours, hence ours ${goodput.toFixed(1)} OK/s from 20 s to 60 s against their 0. Served counts ` +
        "requests a thread finished, for a client still waiting or gone; ours, like theirs, serves every request in its queue.",
    ],
    theirs.seed,
  );
}

export const EXAMPLE_VALIDATIONS = [
  ["01-article-fixed-vs-backoff.yaml", articleExample],
  ["02-aws-backoff-jitter.yaml", awsBackoffExample],
  ["03-brooker-token-bucket.yaml", brookerRetryExample],
  ["04-brooker-collapse.yaml", brookerCollapseExample],
  ["05-brooker-open-closed.yaml", openClosedExample],
  ["06-metastable-capacity-cut.yaml", metastableExample],
  ["07-yandex-good-retry-bad-retry.yaml", yandexExample],
  ["08-stability-sim-retry-storm.yaml", stabilitySimExample],
  ["09-stability-sim-timeout-cascade.yaml", timeoutCascadeExample],
  ["10-stability-sim-gc-death-spiral.yaml", gcDeathSpiralExample],
  ["11-stability-sim-goodput-collapse.yaml", goodputCollapseExample],
] as const;
