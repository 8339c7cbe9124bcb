import { formatDuration } from "../cli/duration.ts";
import { FatalError, UsageError } from "../cli/usage-error.ts";
import type { ScenarioMetrics } from "../model/scenario-metrics.ts";
import { VERDICTS, type Verdict, worstVerdict } from "../model/verdict.ts";
import type { Launcher } from "../runtime/launcher.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { RealDriver } from "../runtime/real-driver.ts";
import type { TargetService } from "../runtime/target-service.ts";
import { figuresOf } from "../runner/simulate.ts";
import type { SimulationConfig } from "../config/simulation-config.ts";
import type { StrategyRun } from "../strategies/runs.ts";
import type { Candidate } from "../recommend/candidates.ts";
import { toConfig } from "../recommend/grid-measure.ts";
import { outageRun } from "../recommend/measure.ts";
import type { ChooseOptions } from "../options/choose.ts";
import { type Order, type Validation, validationTable, type ValidationRow } from "../recommend/report.ts";
import { settingsFor, settingsToArgs, simulatorOnly, systemSettings } from "../recommend/settings.ts";
import type { CandidateSummary } from "../recommend/summary.ts";

/*
 * choose -validate: candidates re-run with the real programs at one outage, beside the
 * simulator's runs of the same system. With ./server (the default): the top candidates and the
 * named loser, and every disagreement on a verdict said loudly. With -target: the winner and the
 * named loser on the user's own service (the demo's crash experiment: its process group stopped
 * and resumed, a watcher's answers for the verdict), and whether choose's order holds there.
 */

/** The named loser -validate runs (-validate-against), checked before anything is measured. */
export function checkValidateAgainst(options: ChooseOptions, ids: readonly string[]): void {
  const against = options.own["validate-against"];
  if (options.own.validate && !ids.includes(against))
    throw new UsageError(`invalid value "${against}" for flag -validate-against: not among the candidates measured (-list shows them)`);
}

/** -validate: the runs, the table on stdout, every disagreement said loudly, and with -target the order's line. */
export async function validateTop(
  options: ChooseOptions,
  summaries: readonly CandidateSummary[],
  ranked: readonly CandidateSummary[],
  configs: ReadonlyMap<string, SimulationConfig>,
  io: ProgramIo,
  launcher: Launcher,
): Promise<Validation | "interrupted"> {
  const own = options.own;
  const top = options.target === undefined ? own["validate-top"] : 1;
  const chosen = ranked.slice(0, top).map((summary) => summary.candidate);
  const against = summaries.find((summary) => summary.candidate.id === own["validate-against"])!.candidate;
  if (!chosen.includes(against)) chosen.push(against);
  const on = options.target === undefined ? "the real ./server and ./client" : `your service at ${options.target.url.href}`;
  let rows: ValidationRow[] | "interrupted";
  try {
    rows = await validate(chosen, configs, options, io, launcher);
  } catch (error) {
    // A service that cannot be played (not served at rest, its command exiting, a pid gone) ends
    // the validation, not choose: its ranking, measured for minutes, is still written.
    if (!(error instanceof FatalError || error instanceof UsageError)) throw error;
    io.stderr.write(`choose: -validate failed: ${error.message}\n`);
    return { on, rows: [], order: undefined, failure: error.message };
  }
  if (rows === "interrupted") return rows;
  const winner = rows.find((row) => row.id === chosen[0]!.id);
  const loser = rows.find((row) => row.id === against.id);
  const order = options.target === undefined || chosen[0] === against ? undefined : orderOnService(winner, loser);
  const validation = { on, rows, order };
  if (!own.json) {
    io.stdout.write(`\nValidation with ${on} (${formatDuration(options.validateOutageMs)} outage):\n${validationTable(rows)}\n\n`);
    if (order !== undefined) io.stdout.write(`${order.words}\n`);
  }
  for (const row of rows.filter((row) => !row.agrees)) {
    const alarm = `!!! DISAGREEMENT: ${row.id}: the simulator says ${row.simulated}, ${options.target === undefined ? "the real programs" : "your service"} ${row.measured} !!!`;
    io.stderr.write(`choose: ${alarm}\n`);
    if (!own.json) io.stdout.write(`${alarm}\n`);
  }
  return validation;
}

/** How good a judged verdict is: lower is better; undefined for a run that was not judged. */
function verdictRank(verdict: Verdict): number | undefined {
  const judged: readonly Verdict[] = ["recovered", "recovering", "collapsed"];
  return judged.includes(verdict) ? VERDICTS.indexOf(verdict) : undefined;
}

/** Two recovery times closer than this, or within this factor of each other, are the same time on one run. */
const SAME_WITHIN_MS = 10_000;
const SAME_FACTOR = 1.5;

/**
 * Whether two recovery times, ms, are the same on one run: within 10 s or a factor 1.5 of each
 * other, whichever allows more (both never, Infinity, are the same). choose's tie on a service, and
 * the rule by which docs/real-services.md holds a real run against its prediction.
 */
export function sameRecoveryTime(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) <= SAME_WITHIN_MS || Math.max(a, b) <= SAME_FACTOR * Math.min(a, b);
}

/**
 * Whether choose's order holds on the service: the winner's real run judged better than the named
 * loser's (a better verdict; the same verdict with its clients back sooner), a tie (the same
 * verdict, clients back at the same time by sameRecoveryTime), or worse; undefined when a run is
 * missing or was not judged, or both collapsed (which says nothing of their order).
 */
export function orderOnService(winner: ValidationRow | undefined, loser: ValidationRow | undefined): Order {
  const order = (holds: boolean | undefined, words: string): Order => ({ holds, words: `choose's order on your service: ${words}` });
  if (winner === undefined || loser === undefined) return order(undefined, "cannot tell: a candidate could not run on it");
  const said = (row: ValidationRow) =>
    `${row.id} ${row.measured}${row.measuredClientRecoveryMs === null ? "" : ` (clients back ${formatDuration(Math.round(row.measuredClientRecoveryMs / 100) * 100)})`}`;
  const both = `the winner ${said(winner)}, ${said(loser)}`;
  const [a, b] = [verdictRank(winner.measured), verdictRank(loser.measured)];
  if (a === undefined || b === undefined) return order(undefined, `cannot tell: ${both}`);
  if (a === b && winner.measured === "collapsed") return order(undefined, `cannot tell: both collapsed at this outage: ${both}`);
  if (a !== b) return order(a < b, `${a < b ? "holds" : "DOES NOT HOLD"}: ${both}`);
  const [wait, loserWait] = [winner.measuredClientRecoveryMs ?? Infinity, loser.measuredClientRecoveryMs ?? Infinity];
  if (sameRecoveryTime(wait, loserWait)) return order(true, `holds, as a tie on this outage: ${both}`);
  return order(wait < loserWait, `${wait < loserWait ? "holds" : "DOES NOT HOLD"}: ${both}`);
}

/** Re-runs candidates on the real programs, or on -target's service, at one outage and compares verdicts with the simulator's. */
async function validate(
  candidates: readonly Candidate[],
  configs: ReadonlyMap<string, SimulationConfig>,
  options: ChooseOptions,
  io: ProgramIo,
  launcher: Launcher,
): Promise<ValidationRow[] | "interrupted"> {
  const { own, target } = options;
  const outageMs = options.validateOutageMs;
  // What the real programs cannot be told about the system (simulator-only flags, e.g. an
  // injected error rate) is left out on both sides, so that both run the same system. A target
  // is the system itself: the simulator runs the whole description of it.
  const described = systemSettings(options.system);
  const dropped = target === undefined ? simulatorOnly(described) : [];
  const system = Object.fromEntries(Object.entries(described).filter(([name]) => !dropped.includes(name)));
  const comparable: Record<string, unknown> = { ...options.system };
  for (const name of dropped) delete comparable[name];
  if (dropped.length > 0) {
    io.stderr.write(
      `choose: -validate leaves out ${dropped.map((name) => `-${name}`).join(" ")} (the real programs do not have it) in both the real and the simulated runs\n`,
    );
  }
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  process.on("SIGINT", onInterrupt);
  process.on("SIGTERM", onInterrupt);
  const rows: ValidationRow[] = [];
  const driver = new RealDriver(target, (line) => io.stderr.write(`choose: ${line}\n`), controller.signal);
  try {
    await driver.prepare(options.system.timeout as number);
    for (const candidate of candidates) {
      const why = cannotRun(candidate, target !== undefined);
      if (why !== undefined) {
        io.stderr.write(`choose: -validate skips ${candidate.id}: ${why}\n`);
        continue;
      }
      const config = dropped.length === 0 ? configs.get(candidate.id)! : toConfig(comparable, candidate.client, candidate.server);
      const simulated = options.seeds.map(
        (seed) =>
          outageRun(config, seed, { steadyMs: own.steady, observeMs: own.observe }, outageMs, { readAsWatcher: target !== undefined })
            .result,
      );
      const strategy = { name: candidate.id as StrategyRun["name"], clientArgs: settingsToArgs(settingsFor("client", candidate.client)) };
      const measured = await realRun(candidate, strategy, driver, {
        options,
        system,
        config,
        io,
        launcher,
        signal: controller.signal,
      });
      const row = validationRow(candidate.id, outageMs, simulated, measured, target !== undefined);
      rows.push(row);
      const stopped = target === undefined ? "server and client stopped" : "client stopped; your service runs on";
      io.stderr.write(`choose: ${candidate.id}: simulated ${row.simulated}, measured ${row.measured}; ${stopped}\n`);
      // The shared verdict says the real client fell behind: this row measures the client, not the server.
      if (measured.verdict === "invalid") io.stderr.write(`choose: !!! ${candidate.id}: the measurement is invalid: ${measured.why} !!!\n`);
    }
  } catch (error) {
    if (controller.signal.aborted) {
      io.stderr.write(`choose: interrupted; ${interruptedWords(target)}\n`);
      return "interrupted";
    }
    throw error;
  } finally {
    // Stopped (a -target-pid's group only resumed) before the handlers go: a second Ctrl-C
    // meanwhile must not end choose with the service still stopped.
    await driver.close();
    process.off("SIGINT", onInterrupt);
    process.off("SIGTERM", onInterrupt);
  }
  return rows;
}

/** What an interrupt leaves: ./server and the client stopped; the client and what -target-cmd started; a -target-pid's service resumed. */
function interruptedWords(target: TargetService | undefined): string {
  if (target === undefined) return "the server and client of the current run were stopped";
  return target.control.kind === "command"
    ? "the client and the service -target-cmd started were stopped"
    : "the client was stopped; your service was resumed and runs on";
}

/** Why a candidate cannot run for real: a setting only the simulator has, or on a target a lever of the server's. */
function cannotRun(candidate: Candidate, onTarget: boolean): string | undefined {
  if (onTarget && Object.keys(candidate.server).length > 0)
    return `${Object.keys(candidate.server)
      .map((name) => `-${name}`)
      .join(" ")} set ./server's levers, which your service does not have`;
  const simOnly = simulatorOnly({ ...candidate.client, ...candidate.server });
  return simOnly.length > 0 ? `${simOnly.map((name) => `-${name}`).join(" ")} exist only in the simulator` : undefined;
}

interface RealRunContext {
  readonly options: ChooseOptions;
  /** The system's settings the real programs take. */
  readonly system: Readonly<Record<string, string>>;
  readonly config: SimulationConfig;
  readonly io: ProgramIo;
  readonly launcher: Launcher;
  readonly signal: AbortSignal;
}

/** One candidate's real run, on ./server or on the target once it is back at its baseline, and its metrics. */
async function realRun(
  candidate: Candidate,
  strategy: StrategyRun,
  driver: RealDriver,
  { options, system, config, io, launcher, signal }: RealRunContext,
): Promise<ScenarioMetrics> {
  const { own } = options;
  const plan = driver.prepared?.plan;
  const announce = () =>
    io.stderr.write(
      `choose: validating ${candidate.id} ${plan === undefined ? "with the real programs" : `on ${plan.service.url.href}`}: ` +
        `${formatDuration(own.steady)} steady, ${formatDuration(options.validateOutageMs)} outage, ${formatDuration(own.observe)} observed\n`,
    );
  const run = await driver.run(
    candidate.id,
    {
      strategy,
      steadyMs: own.steady,
      outageMs: options.validateOutageMs,
      observeMs: own.observe,
      serverArgs: settingsToArgs(settingsFor("server", { ...system, ...candidate.server })),
      clientArgs: [...settingsToArgs(settingsFor("client", system)), "-seed", String(options.seeds[0])],
    },
    {
      signal,
      launcher,
      onProgress: () => {},
      onStarted: (pids) =>
        io.stderr.write(
          `choose: ${candidate.id}: ${plan === undefined ? `server pid ${pids.server}` : `your service ${plan.service.signalledName}`}, client pid ${pids.client}\n`,
        ),
    },
    figuresOf(config).overloadAbove,
    announce,
  );
  return run.metrics;
}

/** One candidate's simulated runs (one per seed) beside its real run: the majority verdict against the measured one. */
function validationRow(
  id: string,
  outageMs: number,
  simulated: readonly { readonly verdict: Verdict; readonly metrics: ScenarioMetrics }[],
  measured: ScenarioMetrics,
  onTarget: boolean,
): ValidationRow {
  const simulatedVerdict = majority(simulated.map((run) => run.verdict));
  const first = simulated[0]!;
  return {
    id,
    outageMs,
    simulated: simulatedVerdict,
    simulatedSeeds: simulated.map((run) => run.verdict),
    measured: measured.verdict,
    agrees: measured.verdict === simulatedVerdict,
    simulatedServerRecoveryMs: first.metrics.serverRecoveryMs ?? null,
    measuredServerRecoveryMs: measured.serverRecoveryMs ?? null,
    simulatedClientRecoveryMs: first.metrics.clientRecoveryMs ?? null,
    measuredClientRecoveryMs: measured.clientRecoveryMs ?? null,
    simulatedPeakConcurrency: first.metrics.peakConcurrencyAfterResume,
    // A watcher does not see how many requests a service holds.
    measuredPeakConcurrency: onTarget ? null : measured.peakConcurrencyAfterResume,
  };
}

/** The verdict most seeds gave; a tie goes to the worse. */
function majority(verdicts: readonly Verdict[]): Verdict {
  const counts = new Map<Verdict, number>();
  for (const verdict of verdicts) counts.set(verdict, (counts.get(verdict) ?? 0) + 1);
  const most = Math.max(...counts.values());
  return worstVerdict([...counts.entries()].filter(([, count]) => count === most).map(([verdict]) => verdict));
}
