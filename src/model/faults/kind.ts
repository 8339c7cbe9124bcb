/**
 * What a fault kind is: the one definition each kind has (src/model/faults/kinds/), read by the
 * schedule's parser, both clocks, the real server's fault control, the reports and the dashboard.
 * Code outside a kind's file asks these properties, never the kind's name
 * (test/unit/kind-names.test.ts), so a new kind is its file, its test and one line in kinds.ts.
 */

/** The conditions the server works under while some faults are on. */
export interface FaultConditions {
  /** Threads or limit × this; 1 when no capacity fault is on. */
  readonly capacityFactor: number;
  /** Service time or delay × this. */
  readonly slowFactor: number;
  /** The share answered 500 instead of the server's own rate; undefined when no errors fault is on. */
  readonly errorRate: number | undefined;
}

export const NORMAL_CONDITIONS: FaultConditions = Object.freeze({ capacityFactor: 1, slowFactor: 1, errorRate: undefined });

/**
 * How the runners play a kind. Each runner implements the four mechanisms once; a kind picks one.
 * - pause: the server is stopped and resumed (SIGSTOP and SIGCONT; the simulator's outage);
 * - restart: the server dies and is started again (its process group killed; the simulated
 *   network's crash): what was in it is lost, connections are refused while it is down;
 * - condition: the server runs under other conditions while it is on (the real server's fault
 *   control, PUT /faults; the model's setFaultConditions);
 * - load: the users' load grows (extra clients, at the edge).
 */
export type FaultMechanism = "pause" | "restart" | "condition" | "load";

/** The factor a kind takes (`*0.5` in the schedule). */
export interface FaultFactor {
  readonly check: (factor: number) => boolean;
  /** What it must be, with an example: "a factor above 0, e.g. capacity@10s+30s*0.5". */
  readonly rule: string;
  /** As a chart's band names it after the kind: "×0.5", "20 %". */
  readonly label: (factor: number) => string;
}

/** How a condition kind bends the server's conditions, and reads them back (the server's fault_factor gauge). */
export interface FaultCondition {
  /** The conditions with this fault on too: overlapping faults combine. */
  readonly bend: (conditions: FaultConditions, factor: number) => FaultConditions;
  /** This kind's figure in the conditions, for the gauge (its value when off, when none is on). */
  readonly read: (conditions: FaultConditions) => number;
}

export interface FaultKindDefinition<Name extends string = string, Mechanism extends FaultMechanism = FaultMechanism> {
  readonly name: Name;
  /** Its clause of -faults' help: "capacity *f: threads or limit". */
  readonly help: string;
  /** undefined: the kind takes no factor. */
  readonly factor: FaultFactor | undefined;
  readonly mechanism: Mechanism;
  /** For the condition mechanism: what it does to the server's conditions. */
  readonly condition?: FaultCondition | undefined;
  /**
   * While it is on, the server's delays and the work it holds stay as they were, so the
   * simulator may count ahead what cannot complete by the end of the run.
   */
  readonly keepsServerDelays: boolean;
  /** It answers some requests with errors: the server model draws from an error stream. */
  readonly injectsErrors: boolean;
  /** It changes the service time, so the model cannot take every request's as fixed. */
  readonly changesServiceTime: boolean;
  /** Its band's colour in the dashboard. */
  readonly fill: string;
}

/** A kind's definition, its name and mechanism kept as literal types for the registry's unions. */
export function defineFaultKind<const Name extends string, const Mechanism extends FaultMechanism>(
  definition: FaultKindDefinition<Name, Mechanism>,
): FaultKindDefinition<Name, Mechanism> {
  return Object.freeze(definition);
}

/** A factor above 0 (capacity, slow), with the kind's example. */
export function positiveFactor(example: string): FaultFactor {
  return { check: (factor) => factor > 0, rule: `a factor above 0, e.g. ${example}`, label: (factor) => `×${factor}` };
}
