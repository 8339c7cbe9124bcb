import { join, resolve } from "node:path";
import { formatDuration } from "../cli/duration.ts";
import { type FlagValues, givenFlagNames, parseFlags } from "../cli/flags.ts";
import { checkFaultTiers, checkSpikeClients, checkSpikesAtEdge, readFaults } from "../config/simulation.ts";
import { type Fault, formatFault } from "../model/faults/fault-schedule.ts";
import { DEFAULT_PHASES } from "../model/experiment-phases.ts";
import { UsageError } from "../cli/usage-error.ts";
import { defaultLauncher, type Launcher } from "../runtime/launcher.ts";
import { makeOutputDir, removeIfEmpty, writeOutputFile } from "../runtime/output-files.ts";
import { scenarioSettings, summaryJson } from "../report/summary-file.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { CLIENT_FLAGS, type ClientFlagValues, type ClientOptions, parseClientArgs, resolveClientOptions } from "../options/client.ts";
import { resolveRetryPolicy } from "../config/load.ts";
import { parseServerArgs, resolveServerOptions, serverFigures } from "../options/server.ts";
import type { ScenarioMetrics } from "../model/scenario-metrics.ts";
import { type DashboardEvent, clientEvent, faultEvent, serverEvent } from "../dashboard/events.ts";
import type { Dashboard } from "../dashboard/server.ts";
import { startAnnouncedDashboard } from "../dashboard/start.ts";
import { readableDelay } from "../report/readable-delay.ts";
import { seconds } from "../model/seconds.ts";
import { comparisonTable, renderReport, type StrategyResult } from "../report/report.ts";
import {
  type ExperimentPlan,
  type ExperimentRecord,
  type LiveRecord,
  type Progress,
  scheduleOf,
  type TierPlan,
  type TierRecord,
} from "../runtime/experiment.ts";
import { type ChainFigures, chainFigures } from "../runtime/chain-figures.ts";
import { chainHeadline } from "../model/tiers/chain-verdict.ts";
import { tierText } from "../report/tier-table.ts";
import { chainPolicyAmplification, chainRunOf, tierPlans } from "./chain.ts";
import { explainVerdict } from "../report/verdict-why.ts";
import { provenance } from "../runtime/provenance.ts";
import { randomSeed } from "../runtime/random-seed.ts";
import { clientArgsOfRun, parseStrategies, type StrategyRun } from "../strategies/runs.ts";
import { DEMO_FLAGS, DEMO_PROGRAM, DEMO_TARGET, RESERVED_CLIENT_FLAGS, RESERVED_SERVER_FLAGS } from "../options/demo.ts";
import { blameScenarioFile, type ScenarioArguments, withScenarioFile } from "../scenario-file/arguments.ts";
import type { TargetService } from "../runtime/target-service.ts";
import type { PreparedTarget } from "../runtime/target-run.ts";
import { targetOf } from "../runtime/target-run.ts";
import { RealDriver } from "../runtime/real-driver.ts";
import { predicted, predictionLine } from "./prediction.ts";
import type { WatchedService } from "../model/verdict.ts";

type DemoValues = FlagValues<typeof DEMO_FLAGS>;

const splitArgs = (text: string) => text.split(/\s+/).filter((part) => part !== "");

type Scenario = ScenarioArguments["scenario"];
type ServerFlags = Extract<ReturnType<typeof parseServerArgs>, { kind: "run" }>["values"];

/** The demo's flags read, checked together, and turned into each program's flags, before anything starts. */
interface DemoSetup {
  readonly values: DemoValues;
  readonly scenario: Scenario;
  /** The scenario file's chain of tiers, the edge first; undefined for one server. */
  readonly chain: NonNullable<Scenario>["tiers"];
  readonly strategies: StrategyRun[];
  readonly faults: Fault[] | undefined;
  readonly serverArgs: string[];
  readonly clientArgs: string[];
  readonly serverFlags: ServerFlags;
  /** Each strategy's client flags, in the order of `strategies`. */
  readonly clientFlags: ClientFlagValues[];
  /** The client flags a strategy's run passes on. */
  readonly argsOfRun: (run: StrategyRun) => readonly string[];
  /** The herd's options, as the first strategy's client resolves them. */
  readonly herd: ClientOptions;
  /** A service of the user's instead of ./server (-target); undefined for ./server. */
  readonly target: TargetService | undefined;
}

/** What every strategy's experiment shares: its seeds, the verdict's limit, the chain's tiers, the results' folder. */
interface DemoRun extends DemoSetup {
  readonly seeds: { readonly server: number; readonly client: number };
  readonly seededServerArgs: readonly string[];
  readonly seedArgs: readonly string[];
  readonly concurrencyLimit: number;
  readonly tiers: TierPlan[] | undefined;
  readonly startedAt: Date;
  readonly outDir: string;
  /** The -faults schedule in words; undefined for the article's one stop. */
  readonly scheduleText: string | undefined;
}

/** One strategy's experiment as the report and the results folder keep it. */
interface StrategyRecord {
  readonly result: StrategyResult;
  readonly lines: { readonly server: string[]; readonly client: string[]; readonly spikes: string[][]; readonly tiers: TierRecord[] };
  /** A target's watcher's answers (the verdict's evidence); undefined for ./server. */
  readonly watched?: WatchedService | undefined;
  /** A target's plan and baseline, the same for every strategy. */
  readonly prepared?: PreparedTarget;
  /** A target's: the simulator's run of the same scenario, named "<strategy> (simulator)", or why there is none. */
  readonly predicted?: { readonly result: StrategyResult } | { readonly why: string };
}

export async function main(argv: readonly string[], io: ProgramIo, launcher: Launcher = defaultLauncher()): Promise<number> {
  const { argv: args, scenario } = await withScenarioFile(argv, DEMO_TARGET, io.stderr);
  const parsed = parseFlags(DEMO_PROGRAM, args);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return 0;
  }
  const setup = await demoSetup(parsed.values, args, scenario);
  if (setup.values["print-scenario"]) {
    io.stdout.write(await scenarioText(setup));
    return 0;
  }
  const run = demoRun(setup);
  // A results directory that cannot be made fails now, not after minutes of experiments.
  makeOutputDir(run.outDir);

  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  process.on("SIGINT", onInterrupt);
  process.on("SIGTERM", onInterrupt);

  announce(run, io);
  const dashboard = run.values.dashboard ? await startAnnouncedDashboard(io, "demo", run.values, "npm run demo") : undefined;
  try {
    const records = await runStrategies(run, { io, launcher, dashboard, signal: controller.signal });
    if (records === "interrupted") return 130;
    const reportPath = await writeResults(run, records);
    const results = records.map((record) => record.result);
    const perTier = results.flatMap((result) =>
      result.chain === undefined ? [] : [`\n${result.strategy}, per tier:\n${tierText(result.chain)}`],
    );
    // A target's rows, then the simulator's for the same scenario beside them.
    const rows = [...results, ...predictedResults(records)];
    io.stdout.write(`\n${comparisonTable(rows)}\n${perTier.join("")}\nreport: ${reportPath}\n`);
    dashboard?.publish({ kind: "end", note: `the report is ${reportPath}` });
    return 0;
  } finally {
    await dashboard?.close();
  }
}

/** The demo's flags with the scenario file's, checked together, and the flags it passes on checked by the programs' own tables. */
async function demoSetup(parsedValues: DemoValues, args: readonly string[], scenario: Scenario): Promise<DemoSetup> {
  const chain = scenario?.tiers;
  const values = chain === undefined ? parsedValues : await chainValues(parsedValues, args.slice(scenario!.tokens.length), scenario!.text);
  const strategies = parseStrategies(values.strategies);
  // A check of flags together that fails on a value from the file names the file's line.
  const commandLine = args.slice(scenario?.tokens.length ?? 0);
  const checkedFromFile = (check: () => void) => {
    try {
      check();
    } catch (error) {
      throw blameScenarioFile(error, scenario, commandLine, DEMO_FLAGS);
    }
  };
  const faults = faultSchedule(values);
  const tierNames = chain?.map((tier) => tier.name) ?? [];
  checkedFromFile(() => {
    checkFaultTiers(faults ?? [], tierNames);
    checkSpikesAtEdge(faults ?? [], tierNames);
  });
  if (chain !== undefined && values["server-args"] !== "") {
    throw new UsageError("-server-args does not apply to a chain of tiers: each tier's flags are in its own system and upstream");
  }
  // A scenario file's server and client flags come first, so that -server-args and -client-args win over them.
  // A chain's edge is the server the users call: its flags stand for the server's (its verdict is the chain's, from every tier).
  const serverArgs =
    chain === undefined ? [...(scenario?.passThrough["server-args"] ?? []), ...splitArgs(values["server-args"])] : [...chain[0]!.system];
  // A chain's tiers print once a second: the users' windows on the same grid, unless the file or the command line says otherwise.
  const clientArgs = [
    ...(chain === undefined ? [] : ["-interval=1s"]),
    ...(scenario?.passThrough["client-args"] ?? []),
    ...splitArgs(values["client-args"]),
  ];
  // Check pass-through flags with the programs' own tables before starting anything.
  refuseReserved("server-args", serverArgs, RESERVED_SERVER_FLAGS);
  refuseReserved("client-args", clientArgs, RESERVED_CLIENT_FLAGS);
  const serverFlags = passThrough("server-args", () => parseServerArgs(serverArgs));
  // Comparing strategies, a parameter flag goes only to the clients of those that read it, as in ./sim.
  const argsOfRun = (run: StrategyRun) => (strategies.length > 1 ? clientArgsOfRun(run, clientArgs, CLIENT_FLAGS) : clientArgs);
  const clientFlags = strategies.map((strategy) =>
    passThrough("client-args", () => parseClientArgs([...strategy.clientArgs, ...argsOfRun(strategy)])),
  );
  // A spike's extra clients run the herd's flags with their own count (or rate) and seed: within the limit, before anything starts.
  const herd = resolveClientOptions(clientFlags[0]!);
  if (faults !== undefined) checkedFromFile(() => checkSpikeClients(faults, herd));
  let target: TargetService | undefined;
  checkedFromFile(() => {
    const schedule = scheduleOf({ faults, steadyMs: values.steady, outageMs: values.outage });
    target = targetOf(values, schedule, chain !== undefined, faults !== undefined);
  });
  return { values, scenario, chain, strategies, faults, serverArgs, clientArgs, serverFlags, clientFlags, argsOfRun, herd, target };
}

/** -print-scenario: the demo's settings as a scenario file. */
async function scenarioText(setup: DemoSetup): Promise<string> {
  const { printScenario } = await import("../scenario-file/print.ts");
  const users = { "client-args": passThrough("client-args", () => parseClientArgs(setup.clientArgs)) };
  // A chain's servers are its tiers, written back as tiers: the edge's flags are not the file's top-level system.
  const carried = setup.chain === undefined ? { "server-args": setup.serverFlags, ...users } : users;
  return printScenario(DEMO_TARGET, setup.values, carried, setup.scenario?.metadata, setup.chain);
}

/** The seeds, the verdict's limit and the results' folder that every strategy's experiment shares. */
function demoRun(setup: DemoSetup): DemoRun {
  const { serverFlags, clientFlags, serverArgs, chain, values } = setup;
  // Every run is seeded, so that the results file can name its seeds: the user's, or one drawn here.
  const seeds = { server: serverFlags.seed ?? randomSeed(), client: clientFlags[0]?.seed ?? randomSeed() };
  const seededServerArgs = serverFlags.seed === undefined ? [...serverArgs, "-seed", String(seeds.server)] : serverArgs;
  const seedArgs = clientFlags[0]?.seed === undefined ? ["-seed", String(seeds.client)] : [];
  // The verdict's line: the exponential model's limit, or where another model is over its tipping point for the clients' timeout.
  const clientTimeoutMs = clientFlags[0]?.timeout ?? passThrough("client-args", () => parseClientArgs(setup.clientArgs)).timeout;
  const concurrencyLimit = serverFigures(resolveServerOptions(serverFlags), clientTimeoutMs).overloadAbove;
  const tiers = chain === undefined ? undefined : tierPlans(chain, seeds.server, RESERVED_SERVER_FLAGS);
  const startedAt = new Date();
  const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
  const outDir = resolve(values.out, stamp);
  const scheduleText = setup.faults?.map((fault) => formatFault(fault, formatDuration)).join(", ");
  return { ...setup, seeds, seededServerArgs, seedArgs, concurrencyLimit, tiers, startedAt, outDir, scheduleText };
}

/** From the steady state's start to the end of the last fault (or of the one stop), ms. */
function troubleMs({ faults, values }: DemoRun): number {
  return faults === undefined ? values.steady + values.outage : Math.max(...faults.map((fault) => fault.atMs + fault.durationMs));
}

/** The demo's first line: what runs, for how long, with which seeds, and where the results go. */
function announce(run: DemoRun, io: ProgramIo): void {
  const { faults, values } = run;
  const perRunMs = troubleMs(run) + values.observe;
  const trouble =
    faults === undefined
      ? `steady ${formatDuration(values.steady)}, outage ${formatDuration(values.outage)}`
      : `faults ${run.scheduleText}`;
  io.stderr.write(
    `demo: ${run.strategies.length} strategies x ${formatDuration(perRunMs)} (${trouble}, observe ${formatDuration(values.observe)}); ` +
      `seeds: server ${run.seeds.server}, client ${run.seeds.client}; results in ${run.outDir}\n`,
  );
}

interface Surroundings {
  readonly io: ProgramIo;
  readonly launcher: Launcher;
  readonly dashboard: Dashboard | undefined;
  /** Aborted by SIGINT or SIGTERM. */
  readonly signal: AbortSignal;
}

/** Runs each strategy's experiment in turn; "interrupted" when a signal stopped one (its programs stopped, an empty folder removed). */
async function runStrategies(run: DemoRun, around: Surroundings): Promise<StrategyRecord[] | "interrupted"> {
  const { io, dashboard } = around;
  const progress = progressPrinter(io);
  const records: StrategyRecord[] = [];
  const driver = new RealDriver(run.target, (line) => io.stderr.write(`demo: ${line}\n`), around.signal);
  try {
    await driver.prepare(run.herd.timeoutMs);
    for (const [index, strategy] of run.strategies.entries()) {
      const record = await runStrategy(run, index, strategy, around, progress, driver);
      const prepared = driver.prepared;
      records.push(prepared === undefined ? record : { ...record, prepared, predicted: predict(run, strategy, io) });
    }
    return records;
  } catch (error) {
    progress.done();
    if (around.signal.aborted) {
      removeIfEmpty(run.outDir);
      dashboard?.publish({ kind: "end", note: "interrupted" });
      const servers = run.target !== undefined ? "target" : run.chain === undefined ? "server" : "servers of every tier";
      io.stderr.write(`demo: interrupted; the ${servers} and client of the current run were stopped\n`);
      return "interrupted";
    }
    throw error;
  } finally {
    await driver.close();
  }
}

/** One strategy's experiment on the real programs, told on stderr and the dashboard as it goes, and its verdict. */
async function runStrategy(
  run: DemoRun,
  index: number,
  strategy: StrategyRun,
  { io, launcher, dashboard, signal }: Surroundings,
  progress: ProgressPrinter,
  driver: RealDriver,
): Promise<StrategyRecord> {
  const { values, concurrencyLimit } = run;
  const plan = driver.prepared?.plan;
  const { record, metrics } = await driver.run(
    strategy.name,
    {
      strategy,
      steadyMs: values.steady,
      outageMs: values.outage,
      faults: run.faults,
      load: herdLoad(run),
      observeMs: values.observe,
      serverArgs: run.seededServerArgs,
      tiers: run.tiers,
      clientArgs: [...run.argsOfRun(strategy), ...run.seedArgs],
    },
    {
      signal,
      launcher,
      ...(dashboard === undefined ? {} : { onRecord: (live: LiveRecord) => publishLive(dashboard, index, live) }),
      onProgress: progress.update,
      onFault: (message) => {
        progress.done();
        io.stderr.write(`demo: ${strategy.name}: ${message}\n`);
      },
      onStarted: (pids) => {
        progress.done();
        const servers =
          plan !== undefined
            ? `target ${plan.service.url.href} ${plan.service.signalledName}`
            : (pids.tiers?.map((tier) => `${tier.name} server pid ${tier.pid}`).join(", ") ?? `server pid ${pids.server}`);
        io.stderr.write(`demo: ${strategy.name}: ${servers}, client pid ${pids.client}\n`);
      },
    },
    concurrencyLimit,
    () => dashboard?.publish({ kind: "run", run: index, strategy: strategy.name, limit: concurrencyLimit }),
  );
  progress.done();
  const result = strategyResult(run, index, record, metrics);
  dashboard?.publish({ kind: "verdict", run: index, verdict: result.metrics.verdict, why: explainVerdict(result.metrics) });
  const stopped = plan === undefined ? "server and client stopped" : "client stopped; the target runs on";
  io.stderr.write(`demo: ${strategy.name}: ${result.metrics.verdict} (${result.metrics.why}); ${stopped}\n`);
  const lines = {
    server: record.serverLines,
    client: record.clientLines,
    spikes: record.spikeClientLines,
    tiers: run.chain === undefined ? [] : record.tiers.slice(1),
  };
  return { result, lines, watched: record.watched };
}

/** The herd's load and seed, for a spike's extra clients. */
function herdLoad({ herd, seeds }: DemoRun): NonNullable<ExperimentPlan["load"]> {
  return {
    arrivals: herd.arrivals.kind,
    clients: herd.clients,
    ratePerSec: herd.arrivals.kind === "open" ? herd.arrivals.ratePerSec : 0,
    seed: seeds.client,
  };
}

/** One strategy's figures and verdict: the edge's (the driver's metrics), or with a chain its tiers'. */
function strategyResult(run: DemoRun, index: number, record: ExperimentRecord, edge: ScenarioMetrics): StrategyResult {
  const { chain, values, concurrencyLimit } = run;
  const userMaxAttempts = () => resolveRetryPolicy(run.clientFlags[index]!).retry.maxAttempts;
  const tiersMeasured =
    chain === undefined
      ? undefined
      : measuredChain(
          record,
          chainPolicyAmplification(userMaxAttempts(), chain),
          scheduleOf({ faults: run.faults, steadyMs: values.steady, outageMs: values.outage }),
        );
  // A chain's headline verdict is its tiers' (one rule: src/model/tiers/chain-verdict.ts); the other figures are the edge's.
  const metrics = tiersMeasured === undefined ? edge : { ...edge, ...chainHeadline(edge, tiersMeasured) };
  return {
    strategy: record.strategy,
    phases: record.phases,
    server: record.server,
    client: record.client,
    metrics,
    concurrencyLimit,
    ...(tiersMeasured === undefined ? {} : { chain: tiersMeasured }),
  };
}

/** The settings the report lists above its charts. */
function reportSettings(run: DemoRun): { name: string; value: string }[] {
  const { values, tiers, serverArgs, clientArgs } = run;
  return [
    { name: "strategies", value: run.strategies.map((strategy) => strategy.name).join(", ") },
    ...(run.faults === undefined
      ? [
          { name: "steady state", value: formatDuration(values.steady) },
          { name: "outage (SIGSTOP)", value: formatDuration(values.outage) },
          { name: "observation after SIGCONT", value: formatDuration(values.observe) },
        ]
      : [
          { name: "faults", value: run.scheduleText! },
          { name: "observation after the last fault", value: formatDuration(values.observe) },
        ]),
    ...(run.target !== undefined
      ? [{ name: "target", value: targetWords(run.target) }]
      : tiers === undefined
        ? [{ name: "server flags", value: serverArgs.length === 0 ? "(defaults)" : serverArgs.join(" ") }]
        : tiers.map((tier, index) => ({
            name: `tier ${tier.name}`,
            value: [...(index < tiers.length - 1 ? [`-upstream (${tiers[index + 1]!.name})`] : []), ...tier.serverArgs].join(" "),
          }))),
    { name: "client flags", value: clientArgs.length === 0 ? "(defaults)" : clientArgs.join(" ") },
    ...(run.target === undefined ? [{ name: "concurrency limit", value: String(run.concurrencyLimit) }] : []),
    { name: "seeds", value: `server ${run.seeds.server}, client ${run.seeds.client}` },
    { name: "started", value: run.startedAt.toISOString() },
  ];
}

/** The simulator's rows of a target's strategies, those it could run. */
function predictedResults(records: readonly StrategyRecord[]): StrategyResult[] {
  return records.flatMap((record) => (record.predicted !== undefined && "result" in record.predicted ? [record.predicted.result] : []));
}

/** A prediction as summary.json keeps it: the simulator's figures, or why there are none. */
function predictionSummary(record: StrategyRecord): object {
  const prediction = record.predicted;
  if (prediction === undefined || "why" in prediction) return { strategy: record.result.strategy, why: prediction?.why ?? "none" };
  return { strategy: record.result.strategy, metrics: prediction.result.metrics };
}

/** summary.json's server: ./server's flags and the verdict's limit, or the target, its baseline and the watcher's bound. */
function targetSettings(run: DemoRun, prepared: PreparedTarget | undefined): object {
  if (run.target === undefined || prepared === undefined) return { serverArgs: run.serverArgs, concurrencyLimit: run.concurrencyLimit };
  return {
    target: {
      url: run.target.url.href,
      control: run.target.control,
      baselineMs: prepared.baseline,
      atBaselineWithinMs: prepared.plan.watch.boundMs,
      watchEveryMs: prepared.plan.watch.intervalMs,
    },
  };
}

/**
 * The simulator's run of a target's strategy, on the model of the scenario's server flags, said
 * in a line: the prediction the real run is set beside (docs/demo.md).
 */
function predict(run: DemoRun, strategy: StrategyRun, io: ProgramIo): NonNullable<StrategyRecord["predicted"]> {
  const { values } = run;
  const prediction = predicted(
    {
      serverArgs: run.serverArgs,
      clientArgs: [...strategy.clientArgs, ...run.argsOfRun(strategy)],
      steadyMs: values.steady,
      outageMs: values.outage,
      observeMs: values.observe,
      faults: values.faults,
      troubleMs: troubleMs(run),
      seed: run.seeds.client,
    },
    strategy,
  );
  if ("why" in prediction) {
    io.stderr.write(`demo: ${strategy.name}: no prediction from the simulator: ${prediction.why}\n`);
    return prediction;
  }
  io.stderr.write(`${predictionLine(strategy.name, prediction.result.metrics)}\n`);
  return { result: { ...prediction.result, strategy: `${strategy.name} (simulator)` } };
}

/** A target as the report names it: its URL and how the demo acted on it. */
function targetWords(target: TargetService): string {
  const control = target.control;
  const how =
    control.kind === "command" ? `started by: ${control.command}` : control.kind === "pid" ? `pid ${control.pid}` : "its URL only";
  return `${target.url.href} (${how})`;
}

/** Writes the results folder: each strategy's chart and JSON lines, summary.json and report.html; returns the report's path. */
async function writeResults(run: DemoRun, records: readonly StrategyRecord[]): Promise<string> {
  const { outDir, faults, values, tiers } = run;
  const results = records.map((record) => record.result);
  const report = await renderReport(
    "thundering-herd: the crash experiment",
    results,
    reportSettings(run),
    run.scenario,
    predictedResults(records),
  );
  for (const [index, { result, lines }] of records.entries()) {
    writeOutputFile(join(outDir, `${result.strategy}.svg`), report.strategySvgs[index]!);
    // A target prints nothing of its own: its watcher's answers are the verdict's evidence.
    const watched = records[index]!.watched;
    if (watched === undefined) writeOutputFile(join(outDir, `${result.strategy}.server.jsonl`), `${lines.server.join("\n")}\n`);
    else
      writeOutputFile(
        join(outDir, `${result.strategy}.watcher.jsonl`),
        watched.answers.map((answer) => `${JSON.stringify(answer)}\n`).join(""),
      );
    writeOutputFile(join(outDir, `${result.strategy}.client.jsonl`), `${lines.client.join("\n")}\n`);
    for (const [spike, spikeLines] of lines.spikes.entries()) {
      writeOutputFile(join(outDir, `${result.strategy}.spike-${spike + 1}.client.jsonl`), `${spikeLines.join("\n")}\n`);
    }
    // Below the edge (whose lines are the .server.jsonl), each tier's lines, every incarnation's in order.
    for (const tier of lines.tiers) {
      writeOutputFile(join(outDir, `${result.strategy}.${tier.name}.server.jsonl`), `${tier.incarnationLines.flat().join("\n")}\n`);
    }
  }
  const settings = {
    ...(faults === undefined ? { steadyMs: values.steady, outageMs: values.outage } : { faults: run.scheduleText, faultSchedule: faults }),
    observeMs: values.observe,
    ...targetSettings(run, records[0]?.prepared),
    ...(run.target === undefined ? {} : { predicted: records.map((record) => predictionSummary(record)) }),
    ...(tiers === undefined ? {} : { tiers }),
    clientArgs: run.clientArgs,
    seeds: run.seeds,
    ...scenarioSettings(run.scenario),
  };
  writeOutputFile(join(outDir, "summary.json"), summaryJson(settings, provenance(run.startedAt), results));
  writeOutputFile(join(outDir, "report.html"), report.html);
  return join(outDir, "report.html");
}

/**
 * A chain's demo takes from its file what the demo's flags do not carry (src/demo/chain.ts):
 * unless the command line gives them, the users' strategy alone (-strategies) and an
 * observation that ends the run at the file's run.duration, as ./sim runs it.
 */
async function chainValues(values: DemoValues, commandLine: readonly string[], text: string): Promise<DemoValues> {
  const given = givenFlagNames(commandLine, DEMO_FLAGS);
  const run = await chainRunOf(text);
  const lastEndMs =
    values.faults === undefined ? values.steady + values.outage : Math.max(...readFaults(values.faults).map((f) => f.atMs + f.durationMs));
  const observe = run.durationMs === undefined || given.has("observe") ? values.observe : run.durationMs - lastEndMs;
  if (observe <= 0) throw new UsageError(`run.duration ${formatDuration(run.durationMs!)} ends before the last fault does`);
  return {
    ...values,
    strategies: given.has("strategies") ? values.strategies : (run.strategy ?? "fixed"),
    observe,
  };
}

/** A chain's figures per tier, from its programs' lines; times from the users' start, as the faults'. */
function measuredChain(record: ExperimentRecord, policy: readonly number[], faults: readonly Fault[]): ChainFigures {
  return chainFigures({
    startEpochMs: record.startEpochMs,
    runStartMs: record.runStartMs,
    clientLines: record.clientLines,
    spikeClientLines: record.spikeClientLines,
    tiers: record.tiers,
    policyAmplification: policy,
    normalUntilMs: record.phases.stopAtMs - record.runStartMs,
    troubleUntilMs: record.phases.resumeAtMs - record.runStartMs,
    faults,
  });
}

/** A report line or phase of the running experiment, on the dashboard. */
function publishLive(dashboard: Dashboard, run: number, live: LiveRecord): void {
  let event: DashboardEvent;
  if (live.kind === "server") event = serverEvent(run, live.sample);
  else if (live.kind === "client") event = clientEvent(run, live.window);
  else if (live.kind === "spike-client")
    event = {
      kind: "spike-client",
      run,
      atS: seconds(live.window.endMs),
      okPerSec: live.window.okPerSec,
      attemptsPerSec: live.window.attemptsPerSec,
    };
  else if (live.kind === "fault") event = faultEvent(run, live.fault);
  else if (live.kind === "tier")
    event = { kind: "tier", run, tier: live.tier, index: live.index, atS: seconds(live.atMs), arrivalsPerSec: live.arrivalsPerSec };
  else event = { kind: "phase", run, phase: live.phase, atS: live.atMs / 1000 };
  dashboard.publish(event);
}

/** The -faults schedule, or undefined for the article's one stop (-steady, -outage); the two do not mix. */
function faultSchedule(values: { faults: string | undefined; steady: number; outage: number }): Fault[] | undefined {
  if (values.faults === undefined) return undefined;
  if (values.steady !== DEFAULT_PHASES.steadyMs || values.outage !== DEFAULT_PHASES.outageMs) {
    throw new UsageError("-faults replaces -steady and -outage: list the stop in it, e.g. stop@15s+20s");
  }
  return readFaults(values.faults);
}

function refuseReserved(flag: string, args: readonly string[], reserved: Readonly<Record<string, string>>): void {
  for (const arg of args) {
    const name = /^--?([^=]+)/.exec(arg)?.[1];
    if (name !== undefined && Object.hasOwn(reserved, name))
      throw new UsageError(`in -${flag}: -${name} is not allowed: ${reserved[name]}`);
  }
}

function passThrough<T>(flag: string, parse: () => { kind: "run"; values: T } | { kind: "help" }): T {
  try {
    const outcome = parse();
    if (outcome.kind === "help") throw new UsageError(`-${flag} must not ask for help`);
    if (flag === "client-args") resolveClientOptions(outcome.values as Parameters<typeof resolveClientOptions>[0]);
    if (flag === "server-args") resolveServerOptions(outcome.values as Parameters<typeof resolveServerOptions>[0]);
    return outcome.values;
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`in -${flag}: ${error.message}`);
    throw error;
  }
}

type ProgressPrinter = ReturnType<typeof progressPrinter>;

/** Live status: one line rewritten in place on a terminal, a line every 5 s otherwise. */
function progressPrinter(io: ProgramIo) {
  const tty = io.stderr.isTTY === true;
  let lastPrintedAt = 0;
  let shown = false;
  return {
    update(progress: Progress) {
      const now = Date.now();
      if (!tty && now - lastPrintedAt < 5_000) return;
      lastPrintedAt = now;
      const client =
        progress.client === undefined
          ? "client -"
          : `client OK ${progress.client.okPerSec.toFixed(1)}/s, errors ${progress.client.errorsPerSec.toFixed(1)}/s, timedout ${progress.client.timedoutPerSec.toFixed(1)}/s`;
      const server =
        progress.server === undefined
          ? "server -"
          : `server concurrency ${progress.server.concurrency}, delay ${readableDelay(progress.server.lastDelayMs)}`;
      const line = `[${progress.strategy}] ${progress.phase.padEnd(8)} ${String(Math.ceil(progress.phaseLeftMs / 1000)).padStart(3)}s left | ${client} | ${server}`;
      io.stderr.write(tty ? `\r\x1b[K${line.slice(0, (io.stderr.columns ?? 160) - 1)}` : `${line}\n`);
      shown = true;
    },
    done() {
      if (tty && shown) io.stderr.write("\r\x1b[K");
      shown = false;
    },
  };
}
