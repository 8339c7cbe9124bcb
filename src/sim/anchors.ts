import { UsageError } from "../cli/usage-error.ts";
import type { ScenarioMetrics } from "../model/scenario-metrics.ts";
import { parseSimArgs, type SimFlagValues } from "../options/sim.ts";
import { trialMetrics } from "./trial.ts";

/*
 * The published experiments the simulator is checked against (issue 19's anchors), as
 * simulator flags: scripts/sim-anchors.ts records them in docs/sim-anchors.json, and a unit
 * test runs each on a scaled-down scale for its qualitative outcome.
 */

/**
 * Marc Brooker's collapse simulation (`simple_collapse_sim` in
 * https://github.com/mbrooker/simulator_example): a linear server, 1 s + 10 ms × requests in
 * it; open Poisson arrivals at 40/s, 80/s for 5 s from 20 s; a 3 s timeout, 3 tries; 80 s.
 * His server fixes each request's time when it arrives (with the concurrency then), ours
 * re-evaluates it as the concurrency changes (see src/model/servers/kinds/linear.ts); his network
 * adds an exponential 100 ms each way, ours nothing.
 */
export const BROOKER_SPIKE: readonly string[] = [
  ...["-model", "linear", "-baseDelay", "1s", "-slope", "10ms", "-timeout", "3s", "-max-attempts", "3"],
  ...["-arrivals", "open", "-rate", "40", "-faults", "spike@20s+5s*2", "-duration", "80s"],
];

/** His two clients: no backoff retries at once; his backoff and jitter waits U(0, 10 s × 2^n) before the n-th retry. */
export const BROOKER_NO_BACKOFF: readonly string[] = ["-strategy", "fixed", "-simple-backoff-delay", "0s"];
export const BROOKER_BACKOFF_AND_JITTER: readonly string[] = ["-strategy", "full-jitter", "-min-delay", "20s", "-max-delay", "40s"];
/** Full jitter with this library's defaults (U(0, 100 ms × 2^(n-1))): last session's run, which collapsed. */
export const DEFAULT_FULL_JITTER: readonly string[] = ["-strategy", "full-jitter"];

/**
 * The retry experiment of "Metastable Failures in the Wild" (Huang et al., OSDI '22;
 * https://github.com/lexiangh/Metastability), in shape: a thread pool (the queue model, 8
 * threads of 20 ms, so 400 requests/s) at 55 % load (2200 users at 100 ms + 10 s think
 * time), whose capacity is cut to 40 % (a CPU cut) from 30 s; clients retry at a fixed
 * interval on a 2 s timeout. The paper: metastable after 10 s at 40 %, recovering after 9 s.
 */
export const METASTABLE_CAPACITY_CUT: readonly string[] = [
  ...["-model", "queue", "-threads", "8", "-service-time", "20ms", "-clients", "2200", "-strategy", "fixed"],
  "-duration",
  "150s",
];
/** The cut, `length` long (a Go duration). */
export const capacityCut = (length: string): string[] => ["-faults", `capacity@30s+${length}*0.4`];

/** The simulator's flag values for some arguments; a UsageError names a wrong one. */
export function simValues(args: readonly string[]): SimFlagValues {
  const parsed = parseSimArgs(args);
  if (parsed.kind === "help") throw new UsageError("help is no scenario");
  return parsed.values;
}

/** One run's metrics, for the given arguments and seed. */
export function anchorRun(args: readonly string[], seed: number): ScenarioMetrics {
  return trialMetrics(simValues([...args, "-seed", String(seed)]));
}
