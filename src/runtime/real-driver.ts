import { computeMetrics, type ScenarioMetrics } from "../model/scenario-metrics.ts";
import { type ExperimentOptions, type ExperimentPlan, type ExperimentRecord, runExperiment } from "./experiment.ts";
import { type PreparedTarget, prepareTarget, settleTarget } from "./target-run.ts";
import type { TargetService } from "./target-service.ts";

/** One strategy's crash experiment on the real clock: what the programs recorded, and its metrics by the one verdict. */
export interface RealRun {
  readonly record: ExperimentRecord;
  /** The edge's metrics (a target's judged by its watcher's answers); a chain's tiers are the caller's to add. */
  readonly metrics: ScenarioMetrics;
}

/** A run's plan without where it runs: the driver adds the target. */
export type RealRunPlan = Omit<ExperimentPlan, "target">;

/**
 * The crash experiment on the real clock, one strategy after another, on our programs (./server,
 * or a chain of them) or on a service of the user's (-target): the driver the demo and choose
 * -validate run their strategies through, as the simulator's runs go through runner/trial.ts. A
 * target is started and measured at rest once (`prepare`), brought back to its baseline before each
 * strategy, and stopped (a -target-pid's group only resumed) by `close`, which must follow
 * `prepare` whatever happens; each run is judged by computeMetrics, a target's by its watcher's
 * answers, a strategy the target was not back at its baseline for said so.
 */
export class RealDriver {
  private preparedTarget: PreparedTarget | undefined;
  private readonly target: TargetService | undefined;
  /** Where the driver's lines go (a target's baseline, a restart), each without its program's prefix. */
  private readonly say: (line: string) => void;
  private readonly signal: AbortSignal;

  constructor(target: TargetService | undefined, say: (line: string) => void, signal: AbortSignal) {
    this.target = target;
    this.say = say;
    this.signal = signal;
  }

  /** Starts the target and measures its baseline within the clients' timeout; nothing for our programs. */
  async prepare(timeoutMs: number): Promise<void> {
    if (this.target !== undefined) this.preparedTarget = await prepareTarget(this.target, timeoutMs, this.say, this.signal);
  }

  /** The target's plan and baseline once prepared; undefined for our programs. */
  get prepared(): PreparedTarget | undefined {
    return this.preparedTarget;
  }

  /**
   * One strategy's experiment (named `label` in the driver's lines), its metrics judged against the
   * verdict's line `overloadAbove`; `onSettled` once a target is back at its baseline (at once on our
   * programs), as the run begins.
   */
  async run(label: string, plan: RealRunPlan, options: ExperimentOptions, overloadAbove: number, onSettled = () => {}): Promise<RealRun> {
    const prepared = this.preparedTarget;
    const unsettled = prepared === undefined ? undefined : await settleTarget(prepared, label, this.say, this.signal);
    onSettled();
    const record = await runExperiment({ ...plan, target: prepared?.plan }, options);
    const metrics = computeMetrics(record.server, record.client, record.phases, overloadAbove, { watched: record.watched, unsettled });
    return { record, metrics };
  }

  /** Stops the target (a -target-pid's group only resumed); nothing for our programs, which each run stops itself. */
  async close(): Promise<void> {
    await this.target?.stop();
  }
}
