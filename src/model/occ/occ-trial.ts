import type { BackoffPolicy } from "../../backoff/policy.ts";
import { streamRandom } from "../../backoff/random.ts";
import { ManualClock } from "../../clock/manual-clock.ts";
import type { NetworkDelay } from "./network-delay.ts";
import { OccClient, type OccClientTally } from "./occ-client.ts";
import { SimulatedTransport } from "./simulated-transport.ts";
import { VersionedRow } from "./versioned-row.ts";

export interface OccTrialConfig {
  readonly clients: number;
  /** Each client's own policy (decorrelated jitter keeps its previous wait per client). */
  readonly policy: BackoffPolicy;
  readonly network: NetworkDelay;
  readonly seed: number;
}

/** One run: every client started at time 0, until each one's write landed. */
export interface OccTrialResult {
  readonly clients: number;
  /** Writes tried, the blog's "calls" (its Stats.calls counts writes only). */
  readonly writes: number;
  /** Reads and writes: every call a client made. */
  readonly calls: number;
  readonly conflicts: number;
  /** When the last client learnt its write had landed: the blog's "time". */
  readonly completionMs: number;
  /** Writes that landed; equal to the row's final version. */
  readonly landed: number;
  readonly gaveUp: number;
}

/**
 * The blog's experiment once, on a virtual clock: `clients` clients each update one row
 * once under optimistic concurrency. Randomness is per client (backoff) and per run
 * (network), so a seed reproduces the run whatever the order of events.
 */
export function runOccTrial(config: OccTrialConfig): OccTrialResult {
  const clock = new ManualClock();
  const row = new VersionedRow();
  const transport = new SimulatedTransport(row, clock, config.network, streamRandom(config.seed, config.clients));
  const tallies: OccClientTally[] = [];
  for (let index = 0; index < config.clients; index++) {
    const client = new OccClient(transport, config.policy, streamRandom(config.seed, index), clock, (tally) => tallies.push(tally));
    client.start();
  }
  clock.runAll();
  return {
    clients: config.clients,
    writes: row.writes,
    calls: row.reads + row.writes,
    conflicts: row.conflicts,
    completionMs: tallies.reduce((latest, tally) => Math.max(latest, tally.doneAtMs ?? 0), 0),
    landed: row.version,
    gaveUp: tallies.filter((tally) => !tally.succeeded).length,
  };
}
