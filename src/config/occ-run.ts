import type { NetworkDelay } from "../model/occ/network-delay.ts";
import type { BlogRun } from "../strategies/blog-backoff.ts";

/*
 * The OCC workload's run as a typed configuration: `./sim -workload occ`'s flags produce it
 * (src/options/occ.ts), a scenario file with `workload: occ` through them, and the runner
 * (src/runner/occ.ts) runs it.
 */

/** Everything that decides the figures: the strategies, the client counts, the backoff, the network, the runs. */
export interface OccRun {
  readonly runs: readonly BlogRun[];
  readonly counts: readonly number[];
  readonly settings: OccSettings;
}

export interface OccSettings {
  readonly baseMs: number;
  readonly capMs: number;
  readonly network: NetworkDelay;
  readonly trials: number;
  readonly seed: number;
}
