/**
 * Every results file in docs/ (docs/*.json): the command that regenerates it and how far each
 * of its figures may move, for `npm run validate` (scripts/validate.ts, test/README.md).
 *
 * - seeded: simulator output. Same code, same seed, same figures: every figure exact (measured:
 *   sim-anchors, sim-faults, the three sim-*-summary files, choose-article and choose-internal
 *   regenerated at 7f605da with no figure moved).
 * - real: the real programs on this machine's clock. Verdicts and other words exact; numbers
 *   within REAL_RUN_TOLERANCE (below, with the spread it comes from).
 * - external: needs another project's clone (their simulator); not regenerated here. The script
 *   and the clone are named; validate checks the file's provenance, and examples.test.ts (run
 *   by validate) rebuilds docs/validation.md from the file, so the page quotes what the file says.
 * - unscripted: no script writes the file: reported as not regenerated (none today; the kind
 *   stays so that a file added without its script is named, not silently passed).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REALTIME_PREFIX } from "./realtime.ts";
import { EXACT, type ComparisonRules, type FigureRule, type Tolerance } from "./results-compare.ts";

export type ResultsFileKind = "seeded" | "real" | "external" | "unscripted";

/** A program run from the repository root: a TypeScript file under node with tsx, or vitest. */
export type Step = readonly string[];

export interface ResultsFile {
  /** What `npm run validate -- NAME` calls it: the file's name without docs/ and .json. */
  readonly name: string;
  readonly file: string;
  readonly kind: ResultsFileKind;
  /** The command shown to people, as the README or the file gives it. */
  readonly command: string;
  /** The runs that regenerate it, in a scratch folder of their own; each step is built when it starts (a folder the last one made). */
  readonly steps?: (scratch: string) => readonly (() => Step)[];
  /** Where the last step left the new file, when not in place. */
  readonly produces?: (scratch: string) => string;
  readonly rules: ComparisonRules;
  /** Applied to the old and the new file alike before they are compared. */
  readonly normalize?: (figures: unknown) => unknown;
  /** For an external file: the clone its script needs. */
  readonly needs?: string;
  /**
   * Its steps run at real-time priority (REALTIME_PREFIX), as the demo files were recorded: the
   * tolerance below was measured between runs made that way, and an ordinary-priority run on this
   * machine moved six figures of demo-presets beyond it (test/README.md). docs/three-tiers.json was
   * recorded at ordinary priority; rerun at real-time priority from the fresh clone of 5df82e2, its
   * figures held within their tolerances.
   */
  readonly realtime?: boolean;
}

/**
 * How far a real run's numbers may move from the committed run's: four standard deviations of the
 * difference between two runs, measured on this 2-core machine at real-time priority over every
 * pair of runs of the demo files there are (the committed runs of 0462310, a fresh clone of
 * 1abfaa1, and demo-presets again from a fresh clone of b97166e, 2026-11-28: 39 pairs of each
 * figure), so that a validate of some 250 real figures fails by chance about once in sixty.
 * The widest of the figures that average over a run, baseline OK/s, moved by 2.9 % (its standard
 * deviation; 5.5 % at most): ±13 %. The others moved less (outage load 2.5 %, 9.4 % at most;
 * peak in service 1.7 %; retry amplification 0.9 %); every verdict was the same in every run.
 * Times to recover move by the server's one-second report, wasted work's counts by up to 18.
 * An earlier ±8 %, from two runs, failed on the third: sre-throttle's outage load 1.597x against
 * 1.460x (8.6 %). When a strategy's clients are back moves by more: BACKOFF_CLIENTS_BACK_TOLERANCE, CLIENTS_BACK_TOLERANCE.
 * Those runs drew their seeds afresh, and the figures of one file share its draw: the pairs
 * understate a file's spread (demo-presets-instances-1 moved 13-25 % at once from a fresh clone of
 * 5df82e2). A demo file is now rerun with its recorded seeds (withRecordedSeeds), and moves far less.
 */
export const REAL_RUN_TOLERANCE: Tolerance = { kind: "relative", relative: 0.13 };
/**
 * The most load in one window against normal (`peakAmplification`, and a chain's peaks): the
 * extreme of a few windows moves more than their mean. Its standard deviation over the same 39
 * pairs: 4.35 % (11.8 % at most, exponential-backoff's 0.796x against 0.890x): ±20 %. The chain of
 * docs/three-tiers.json moved within that in its runs (its edge's peak arrivals 112.8, then 131.9
 * a second; its db's 812, 891, 816).
 */
const PEAK_TOLERANCE: Tolerance = { kind: "relative", relative: 0.2 };
/**
 * A load as a share of the normal rate (outage and peak amplification) near zero, where a share of
 * it is a few attempts: rerun with the seeds it records (withRecordedSeeds) from a fresh clone of bd1bdc6, demo-presets-instances-1
 * moved five strategies' outage loads by 0.7 % at most, and breaker's 0.109x by 0.015x (13.4 %: the
 * instant its breaker opened). Held to ±0.05x of the normal rate too, whichever is larger. One rerun
 * so far: a floor from one pair, said as such.
 */
const SMALL_LOAD_FLOOR = 0.05;
/**
 * When the chain's users were back at 90 % OK: 5.2 s at 17e33bf, 1.1 s and then 2.1 s at 365effc,
 * 4.1 s from the fresh clone of 1abfaa1, a few of its one-second windows either way; held to the
 * range of those four runs.
 */
const CHAIN_CLIENTS_BACK_TOLERANCE: Tolerance = { kind: "relative", relative: 0.08, absolute: 4100 };
/**
 * When exponential-backoff's clients were back in a demo (the end of the first of two good 5-second client windows after
 * the resume) moves by whole windows, and for a backoff whose waits grow by e each time
 * (exponential-backoff: 15 s, 40 s, then 109 s) by when the slowest tenth of its users ends a wait,
 * not by a share. exponential-backoff's, over six runs of the same client settings: 45.2 s at
 * 0462310 (demo-presets and demo-all), 45.2 s from a fresh clone of 1abfaa1, 55.1 s in the README's
 * demo at eb8605e, 60.1 s at ordinary priority and 65.1 s from a fresh clone of df7b2b1: standard
 * deviation 8.75 s, so four of the difference between two runs is 49.5 s. Held to ±50 s, by the
 * rule every other real figure follows; the range seen was 20 s. It fails on clients that come back
 * twice as late as recorded, or never (then the verdict fails too). The ±13 % held before failed
 * on the 65.1 s run.
 */
const BACKOFF_CLIENTS_BACK_TOLERANCE: Tolerance = { kind: "relative", relative: 0.13, absolute: 50_000 };
/**
 * When another strategy's clients were back: held to one of the client's 5-second windows, by which
 * the figure moves (the end of the first of two good windows), or ±13 %, whichever is larger; the
 * ±50 s above is exponential-backoff's alone (breaker's 5.3 s would pass at ten times as long).
 */
const CLIENTS_BACK_TOLERANCE: Tolerance = { kind: "relative", relative: 0.13, absolute: 5_000 };
/**
 * The retrograde service's peak (docs/probe-retrograde.json), in users: over the eight probes of
 * test/fixtures/retrograde/ (load average 2 to 11), the USL's peak had a standard deviation of 9.0 %
 * and the measured one 6.2 %; four standard deviations of the difference between two runs are 53 %
 * and 37 % (the most apart, 35 % and 23 %): ±55 %. A half-second step's noise on a flat top; what
 * is held tightly is that the USL is picked and its peak lies within 15 % of the measured one in
 * the same run.
 */
const RETROGRADE_PEAK_TOLERANCE: Tolerance = { kind: "relative", relative: 0.55 };
/** Its best step's throughput over the same runs: 2.6 %, pairs 15.5 %: ±16 %. */
const RETROGRADE_THROUGHPUT_TOLERANCE: Tolerance = { kind: "relative", relative: 0.16 };
/** The seeds and the cases docs/real-services-repeat.json repeats (the zoo's disagreements of its recording at c7596c3). */
const REPEATED = [
  "1,2,3",
  "gunicorn-sync-backlog-16=spike@15s+10s*3",
  "haproxy-maxconn-queue=stop@15s+20s",
  "gunicorn-sync-backlog-16=stop@15s+20s",
];
/** A real run's and its prediction's times, and the words that repeat them (docs/real-services.json). */
const RUN_TIMES = ["real", "predicted"].flatMap((side) =>
  ["serverBackMs", "clientsBackMs", "why"].map((key) => `strategies[*].${side}.${key}`),
);

/**
 * What a real service held when it began to turn work away (docs/real-services.json): a kernel's
 * accept queue and a worker count are exact (21), a proxy's queue bounded by time moves with the
 * rate (haproxy: 44 held), and the first requests turned away meet a count that moves by a few.
 */
const HELD_AT_EXCESS_TOLERANCE: Tolerance = { kind: "relative", relative: 0.25, absolute: 2 };
const REAL_COUNT_TOLERANCE: Tolerance = { kind: "relative", relative: 0.08, absolute: 20 };
const REPORT_INTERVAL_TOLERANCE: Tolerance = { kind: "relative", relative: 0.08, absolute: 1000 };

const WORDS: Tolerance = { kind: "ignored", why: "words repeating the figures held beside them" };

/** In a real run's result (under `run`): numbers that are not outcomes, and words that repeat the figures held beside them. */
function realRunRules(run: string): FigureRule[] {
  return [
    { pattern: `${run}.phases.**`, tolerance: { kind: "ignored", why: "when the demo's timers fired on a shared machine" } },
    { pattern: `${run}.metrics.why`, tolerance: WORDS },
    { pattern: `${run}.firstCollapsedText`, tolerance: WORDS },
    {
      pattern: `${run}.metrics.peakDelayAfterResumeMs`,
      // At 46 000 in service, 0.5 % more requests double the delay (1.05 per 15 above the limit).
      tolerance: { kind: "ignored", why: "the delay curve at the peak concurrency, which is held" },
    },
    { pattern: `${run}.metrics.wastedWork.*`, tolerance: REAL_COUNT_TOLERANCE },
    { pattern: `${run}.metrics.serverRecoveryMs`, tolerance: REPORT_INTERVAL_TOLERANCE },
    { pattern: `${run}.metrics.peakAmplification`, tolerance: { kind: "relative", relative: 0.2, absolute: SMALL_LOAD_FLOOR } },
    { pattern: `${run}.metrics.outageAmplification`, tolerance: { kind: "relative", relative: 0.13, absolute: SMALL_LOAD_FLOOR } },
  ];
}
const DRAWN_SEEDS: Tolerance = { kind: "ignored", why: "drawn afresh for every real run" };

const node =
  (...argv: string[]): (() => Step) =>
  () =>
    argv;

/** A file one script of scripts/ writes: its command, shown and run, from one argv. */
function scriptFile(name: string, kind: ResultsFileKind, argv: readonly string[], rules: ComparisonRules): ResultsFile {
  return {
    name,
    file: `docs/${name}.json`,
    kind,
    command: `node --import ./src/register-tsx.mjs ${argv.join(" ")}`,
    steps: () => [node(...argv)],
    rules,
  };
}

/** The single folder a demo wrote under its -out (results/<timestamp>/). */
function onlyRun(folder: string): string {
  const runs = readdirSync(folder);
  if (runs.length !== 1) throw new Error(`${folder}: expected one run's folder, found ${runs.length}`);
  return join(folder, runs[0]!);
}

/** A summary.json of ./sim or the demo, written under -out and copied over the committed one. */
function summaryFile(name: string, program: "sim" | "demo", flags: readonly string[], backoffRow?: number): ResultsFile {
  const shown =
    program === "sim" ? `./sim ${flags.join(" ")} -out results/${name}` : `${realtimeShown()}npm run demo -- ${shownFlags(flags)}`;
  return {
    name,
    file: `docs/${name}.json`,
    kind: program === "sim" ? "seeded" : "real",
    realtime: program === "demo",
    command: shown,
    steps: (scratch) => [
      node(
        `src/bin/${program}.ts`,
        ...(program === "demo" ? withRecordedSeeds(`docs/${name}.json`, flags) : flags),
        "-out",
        join(scratch, "out"),
      ),
    ],
    produces: (scratch) => (program === "sim" ? join(scratch, "out", "summary.json") : join(onlyRun(join(scratch, "out")), "summary.json")),
    rules:
      program === "sim"
        ? { otherwise: EXACT }
        : {
            rules: [
              // Given from the file (withRecordedSeeds): the rerun is the recorded run only with its seeds.
              { pattern: "settings.seeds.*", tolerance: EXACT },
              ...(backoffRow === undefined
                ? []
                : [{ pattern: `results[${backoffRow}].metrics.clientRecoveryMs`, tolerance: BACKOFF_CLIENTS_BACK_TOLERANCE }]),
              { pattern: "results[*].metrics.clientRecoveryMs", tolerance: CLIENTS_BACK_TOLERANCE },
              ...realRunRules("results[*]"),
            ],
            otherwise: REAL_RUN_TOLERANCE,
          },
    // The command it records names the folder it was written to: a scratch folder, not a figure; and a demo's
    // flags name the seeds validate gave it, which the seeds beside them hold exactly.
    normalize: (figures) => withoutSeedFlags(withoutOutFolder(figures)),
  };
}

/**
 * A demo file's flags with the seeds it records (settings.seeds), so that its users think and
 * arrive as they did: one draw of the client's seed per file moved the baseline of every
 * strategy in it together, 89 to 102 OK/s over nine fresh runs (4.8 % standard deviation), and
 * every figure divided by it with it (demo-presets-instances-1's outage loads, 13-25 % in the
 * fresh clone of 5df82e2, all six at once). What is left to move is the machine's clock.
 */
function withRecordedSeeds(file: string, flags: readonly string[]): string[] {
  const seeds = (JSON.parse(readFileSync(file, "utf8")) as { settings: { seeds: { server: number; client: number } } }).settings.seeds;
  const withSeed = (name: string, seed: number, args: string[]) => {
    const at = args.indexOf(name);
    if (at < 0) return [...args, name, `-seed ${seed}`];
    return args.map((arg, index) => (index === at + 1 ? `${arg} -seed ${seed}` : arg));
  };
  return withSeed("-server-args", seeds.server, withSeed("-client-args", seeds.client, [...flags]));
}

/** The -seed flags validate adds, out of the flags a demo file records. */
function withoutSeedFlags(figures: unknown): unknown {
  const settings = (figures as { settings?: { clientArgs?: unknown; serverArgs?: unknown } }).settings;
  if (settings === undefined) return figures;
  const strip = (args: unknown) =>
    Array.isArray(args) ? args.filter((arg, index) => arg !== "-seed" && args[index - 1] !== "-seed") : args;
  return {
    ...(figures as object),
    settings: { ...settings, clientArgs: strip(settings.clientArgs), serverArgs: strip(settings.serverArgs) },
  };
}

/** A script's file, run (and shown) at real-time priority, as the demo files are. */
function atRealTimePriority(entry: ResultsFile): ResultsFile {
  return { ...entry, realtime: true, command: `${realtimeShown()}${entry.command}` };
}

/** What a person types for REALTIME_PREFIX, where this machine allows it. */
function realtimeShown(): string {
  return REALTIME_PREFIX.length > 0 ? `${REALTIME_PREFIX.join(" ")} ` : "";
}

/** Flags as a shell takes them: an argument with a space is quoted. */
function shownFlags(flags: readonly string[]): string {
  return flags.map((flag) => (/\s/.test(flag) ? `"${flag}"` : flag)).join(" ");
}

function withoutOutFolder(figures: unknown): unknown {
  const settings = (figures as { settings?: { command?: unknown } }).settings;
  if (typeof settings?.command !== "string") return figures;
  return { ...(figures as object), settings: { ...settings, command: settings.command.replace(/ -out \S+/, " -out <folder>") } };
}

/** A recorded choose run: the flags it records, run again by scripts/choose-record.ts. */
function chooseFile(name: string, flags: readonly string[]): ResultsFile {
  return scriptFile(name, "seeded", ["scripts/choose-record.ts", `docs/${name}.json`, ...flags], {
    rules: [{ pattern: "recorded.note", tolerance: { kind: "ignored", why: "a remark on the machine" } }],
    otherwise: EXACT,
  });
}

const CHOOSE_CANDIDATES =
  "exponential-backoff,exponential,exponential:min-delay=1s,full-jitter,full-jitter:max-attempts=3,decorrelated-jitter,grpc,google," +
  "grpc-throttled,envoy-budget,aws-standard,sre-throttle,breaker,full-jitter:breaker=consecutive,full-jitter:breaker=sampling," +
  "full-jitter:budget=envoy,full-jitter:budget=aws,full-jitter:budget=grpc,full-jitter:throttle=sre";

function externalFile(name: string, script: string, needs: string): ResultsFile {
  return { name, file: `docs/${name}.json`, kind: "external", command: script, needs, rules: { otherwise: EXACT } };
}

const TIERS_EXAMPLE = "examples/three-tiers.yaml";

export const RESULTS_FILES: readonly ResultsFile[] = [
  scriptFile("sim-anchors", "seeded", ["scripts/sim-anchors.ts", "docs/sim-anchors.json"], { otherwise: EXACT }),
  scriptFile("sim-faults", "seeded", ["scripts/sim-faults.ts", "docs/sim-faults.json"], { otherwise: EXACT }),
  summaryFile("sim-all-summary", "sim", ["-quiet", "-strategies", "all"]),
  summaryFile("sim-presets-summary", "sim", ["-quiet", "-strategies", "fixed,exponential-backoff,presets"]),
  summaryFile("sim-presets-instances-1-summary", "sim", ["-quiet", "-strategies", "presets", "-instances", "1"]),
  chooseFile("choose-article", ["-parallel", "2"]),
  chooseFile("choose-internal", [
    ...[
      "-instances",
      "20",
      "-arrivals",
      "open",
      "-rate",
      "2000",
      "-error-rate",
      "0.005",
      "-timeout",
      "300ms",
      "-limit",
      "600",
      "-k",
      "300",
    ],
    ...["-seeds", "1", "-candidates", CHOOSE_CANDIDATES, "-parallel", "2"],
  ]),
  chooseFile("choose-mobile", [
    ...["-clients", "100000", "-error-rate", "0.02", "-timeout", "10s", "-limit", "3000", "-k", "1500"],
    ...["-seeds", "1", "-candidates", CHOOSE_CANDIDATES, "-parallel", "2"],
  ]),
  // The README's and docs/check.md's example: a user's gRPC config graded on a thread pool (seeded).
  scriptFile("check-example", "seeded", ["scripts/check-example.ts", "docs/check-example.json"], { otherwise: EXACT }),
  {
    name: "validation-results",
    file: "docs/validation-results.json",
    kind: "seeded",
    command: "npx vitest run --project validate test/validate/examples.test.ts",
    // Also writes docs/validation.md from this file and the external files' figures.
    steps: () => [node("vitest", "run", "--project", "validate", "test/validate/examples.test.ts")],
    // Its real runs' rows are verdicts (1 recovered, 0 not, null not judged): exact too.
    rules: { otherwise: EXACT },
    // Whether a real run had to be run again under chrt (its client fell behind on a busy machine) is the machine's, not a figure.
    normalize: (figures) =>
      JSON.parse(JSON.stringify(figures).replace(/; run twice: the first run's client fell behind, the second ran[^"]*/g, "")),
  },
  // exponential-backoff is the second strategy of both (the registry's order; the list's).
  summaryFile("demo-all-summary", "demo", ["-strategies", "all"], 1),
  summaryFile("demo-presets-summary", "demo", ["-strategies", "fixed,exponential-backoff,presets"], 1),
  summaryFile("demo-presets-instances-1-summary", "demo", ["-strategies", "presets", "-client-args", "-instances 1"]),
  {
    name: "three-tiers",
    file: "docs/three-tiers.json",
    kind: "real",
    // At real-time priority like the demo files: its chain of eight processes is the most easily hurried of the real runs.
    realtime: true,
    command: `${realtimeShown()}npm run demo -- ${TIERS_EXAMPLE} -out results/three-tiers, then node --import ./src/register-tsx.mjs scripts/three-tiers.ts docs/three-tiers.json results/three-tiers/<stamp>`,
    steps: (scratch) => [
      node("src/bin/demo.ts", TIERS_EXAMPLE, "-out", join(scratch, "demo")),
      () => ["scripts/three-tiers.ts", "docs/three-tiers.json", onlyRun(join(scratch, "demo"))],
    ],
    // The simulator's and choose's parts are seeded: exact. Only the demo's real run moves.
    rules: {
      rules: [
        { pattern: "demo.settings.**", tolerance: { kind: "ignored", why: "the real run's drawn seeds, in its tiers' flags" } },
        ...realRunRules("demo.result"),
        // A chain's peaks, and its users' return after the db's crash: their spread measured over its runs (above).
        { pattern: "demo.result.metrics.peakConcurrencyAfterResume", tolerance: PEAK_TOLERANCE },
        { pattern: "demo.result.tiers[*].peakArrivalsPerSec", tolerance: PEAK_TOLERANCE },
        { pattern: "demo.result.tiers[*].peakLoad", tolerance: PEAK_TOLERANCE },
        { pattern: "demo.result.metrics.clientRecoveryMs", tolerance: CHAIN_CLIENTS_BACK_TOLERANCE },
        { pattern: "demo.result.tiers[*].workForNobody", tolerance: REAL_COUNT_TOLERANCE },
        { pattern: "demo.result.**", tolerance: REAL_RUN_TOLERANCE },
      ],
      otherwise: EXACT,
    },
  },
  atRealTimePriority(
    // Chains of real ./server tiers, as three-tiers': the fresh clone of 550deaf moved one tier's peak by 28 % while
    // CPU-heavy probes ran beside it at the same priority, and kept every figure within its tolerance rerun alone (test/README.md).
    scriptFile("tiers-agreement", "real", ["scripts/tiers-agreement.ts", "-out", "docs/tiers-agreement.json"], {
      rules: [
        { pattern: "results[*].real.seeds.*", tolerance: DRAWN_SEEDS },
        { pattern: "results[*].real.firstCollapsedText", tolerance: WORDS },
        { pattern: "results[*].real.**", tolerance: REAL_RUN_TOLERANCE },
        { pattern: "results[*].peakRatios[*]", tolerance: REAL_RUN_TOLERANCE },
      ],
      otherwise: EXACT,
    }),
  ),
  scriptFile("probe-gunicorn-summary", "real", ["scripts/probe-gunicorn.ts"], {
    rules: [
      // Text that repeats the measured figures held here, and names gunicorn's port.
      ...["command", "picked", "output", "scenario", "system.service-time"].map((pattern) => ({
        pattern,
        tolerance: { kind: "ignored", why: "words repeating the measured figures, with the port" } as const,
      })),
      { pattern: "measuredSaturationPerSec", tolerance: REAL_RUN_TOLERANCE },
      { pattern: "modelCapacityPerSec", tolerance: REAL_RUN_TOLERANCE },
    ],
    otherwise: EXACT,
  }),
  scriptFile("probe-retrograde", "real", ["scripts/probe-retrograde.ts"], {
    rules: [
      // Text that repeats the measured figures held here, and names gunicorn's port.
      ...["command", "output", "scenario", "fits", "system"].map((pattern) => ({
        pattern,
        tolerance: { kind: "ignored", why: "words repeating the measured figures, with the port" } as const,
      })),
      // Each step of a curve that falls, on a shared machine: whether it falls, the fall and the peaks below are held.
      { pattern: "steps", tolerance: { kind: "ignored", why: "each step of a shared machine's run; the fall and the peaks are held" } },
      {
        pattern: "fallPerCent",
        tolerance: { kind: "ignored", why: "how far the last step falls: 9 % to 33 % in the recorded runs; that it falls is held" },
      },
      { pattern: "peak.measuredPerSec", tolerance: RETROGRADE_THROUGHPUT_TOLERANCE },
      { pattern: "peak.measuredConcurrency", tolerance: RETROGRADE_PEAK_TOLERANCE },
      { pattern: "peak.uslConcurrency", tolerance: RETROGRADE_PEAK_TOLERANCE },
      // How the measured peak was read, and the best step and the top it was read from: the noise a vertex averages out.
      ...["peak.measuredHow", "peak.bestStepConcurrency", "peak.topConcurrencies"].map((pattern) => ({
        pattern,
        tolerance: { kind: "ignored", why: "which steps the noise put at the top; the peak read from them is held" } as const,
      })),
      { pattern: "peak.offPerCent", tolerance: { kind: "ignored", why: "the two peaks' ratio, each held, and whether within 15 %" } },
    ],
    otherwise: EXACT,
  }),
  // Needs Debian's gunicorn, nginx-light, haproxy and apache2 (docs/real-services.md).
  scriptFile("real-services", "real", ["scripts/real-services.ts"], {
    rules: [
      // What the service did with the excess, as the scenario says it: dropped or answered, and where it began.
      { pattern: "services[*].system.shed-with", tolerance: EXACT },
      { pattern: "services[*].measured.held-at-excess", tolerance: HELD_AT_EXCESS_TOLERANCE },
      ...["picked", "pastSaturation", "system.*", "measured.*"].map((part) => ({
        pattern: `services[*].${part}`,
        tolerance: { kind: "ignored", why: "a real run's counts, times and fit on a shared machine, and words repeating them" } as const,
      })),
      // The crash experiment on the real service and the simulator's on the probed scenario: their verdicts are held.
      ...["baselineMs.*", "atBaselineWithinMs", ...RUN_TIMES, "strategies[*].kernel**"].map((part) => ({
        pattern: `services[*].experiments[*].${part}`,
        tolerance: {
          kind: "ignored",
          why: "real times on a shared machine, and the simulator's on a fitted service time that moves with it, and words repeating them",
        } as const,
      })),
      // choose on the probed scenario, validated on the service: whether its order held is held; which
      // policy won moves with the fit, and the runs' times and the service's port with the machine.
      ...["winner", "validation.on", "validation.order.words", "validation.rows[*].*"].map((part) => ({
        pattern: `services[*].choose.${part}`,
        tolerance: { kind: "ignored", why: "the winner of a fitted scenario, a real run's times and the service's free port" } as const,
      })),
    ],
    otherwise: EXACT,
  }),
  // The zoo's disagreements, each case repeated with several seeds (docs/real-services.md).
  scriptFile("real-services-repeat", "real", ["scripts/real-services-repeat.ts", ...REPEATED], {
    rules: [
      ...["real.*", "watcher**", "kernel**"].map((part) => ({
        pattern: `cases[*].runs[*].strategies[*].${part}`,
        tolerance: {
          kind: "ignored",
          why: "each real run's outcome, its watcher's answers and the kernel's counters: how often it comes back is what the file shows, not a figure to hold",
        } as const,
      })),
      ...["baselineMs.*", "atBaselineWithinMs"].map((part) => ({
        pattern: `cases[*].runs[*].${part}`,
        tolerance: { kind: "ignored", why: "the service's latency at rest on a shared machine" } as const,
      })),
    ],
    // The simulator's runs of the recorded scenario, seeded: they repeat exactly.
    otherwise: EXACT,
  }),
  scriptFile("probe-server-fits", "real", ["scripts/probe-server-fits.ts"], {
    rules: [
      {
        pattern: "real.**",
        // The probe on the machine's own clock: what it records is the spread the machine's load gives, not a figure to hold.
        tolerance: { kind: "ignored", why: "the real clock's spread under this machine's load, which that part measures" },
      },
    ],
    // The virtual clock: the server and the probe on one manual clock repeat exactly.
    otherwise: EXACT,
  }),
  externalFile(
    "brooker-python",
    "python3 scripts/brooker-python.py <his clone> docs/brooker-python.json",
    "github.com/mbrooker/simulator_example",
  ),
  externalFile(
    "occ-summary",
    "node --import ./src/register-tsx.mjs scripts/occ-record.ts -blog-simulator <clone>/src/backoff_simulator.py",
    "github.com/aws-samples/aws-arch-backoff-simulator",
  ),
  externalFile(
    "stability-sim",
    "node --import ./src/register-tsx.mjs scripts/stability-sim-record.ts -checkout <clone>",
    "github.com/marcbrooker/stability-sim",
  ),
  externalFile(
    "yandex-simulations",
    "PYTHONPATH=<simpy>/src /usr/bin/python3 scripts/yandex-record.py <clone> docs/yandex-simulations.json",
    "github.com/jirfag/simulations (and SimPy)",
  ),
  scriptFile("example-01-real", "real", ["scripts/example-01-real.ts"], {
    rules: [
      // The script runs the demo itself, at real-time priority where allowed, and records whether it could.
      { pattern: "timeout400msRealtimePriority.results[*].why", tolerance: WORDS },
    ],
    // Verdicts, and the client's windows and those behind: the page cites none behind, judged.
    otherwise: EXACT,
  }),
];
