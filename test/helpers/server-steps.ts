import { setImmediate as nextTurn } from "node:timers/promises";
import { ManualClock } from "../../src/clock/manual-clock.ts";
import type { Clock } from "../../src/clock/clock.ts";
import { realClock } from "../../src/clock/real-clock.ts";
import { REAL_TIMING, type StepTiming } from "../../src/probe/load-step.ts";
import type { ServerModelSpec } from "../../src/model/servers/models.ts";
import type { FamilyFitter } from "../../src/probe/fit/held-out.ts";
import type { StepMeasure } from "../../src/probe/fit/step-measure.ts";
import { type ProbeLimits, probeSteps } from "../../src/probe/probe-run.ts";
import type { SaturationRule } from "../../src/probe/saturation.ts";
import { type RunningServer, startHttpServer } from "../../src/server/http-server.ts";
import { serverModelOf } from "../../src/config/server-system.ts";
import { parseServerArgs, resolveServerOptions } from "../../src/options/server.ts";

/** The real ./server in this process on a loopback port 0, with the model its flags set, and the probe's steps to run against it. */
export interface ServerCurveCase {
  readonly kind: "queue" | "linear" | "exponential";
  readonly flags: readonly string[];
  readonly steps: readonly number[];
}

/**
 * The three server models, with steps close enough together that each family's bend lies
 * between two of them: the queue's knee at 4 users, the linear model's constant slope, the
 * exponential model's growth from its limit of 4 (its throughput peaks at k ÷ ln(factor) = 7.2 users).
 */
export const SERVER_CURVE_CASES: readonly ServerCurveCase[] = [
  { kind: "queue", flags: ["-model", "queue", "-threads", "4", "-service-time", "25ms"], steps: [1, 2, 3, 4, 6, 8, 12] },
  { kind: "linear", flags: ["-model", "linear", "-baseDelay", "20ms", "-slope", "5ms"], steps: [1, 2, 4, 6, 8, 12] },
  { kind: "exponential", flags: ["-baseDelay", "20ms", "-limit", "4", "-factor", "8", "-k", "15"], steps: [1, 2, 4, 6, 8, 10, 12] },
];

/** Steps of 300 virtual ms and ten answers at least: a few hundred requests a model, well under a second of real time. */
export const SHORT_STEP_LIMITS: ProbeLimits = {
  stepDurationMs: 300,
  stepRequests: 10,
  maxRequests: 100_000,
  // Virtual milliseconds pass faster than real ones: the probe's real-time rate window must not hold it back.
  maxRatePerSec: 100_000,
  maxTimeMs: 60_000,
  timeoutMs: 10_000,
  maxBodyBytes: 1 << 20,
};

/**
 * Runs the probe's steps (every one, or until `rule` says saturated) against the server the flags make, on
 * a virtual clock shared by the server's model and the probe's measures, and closes the server.
 * Real sockets carry every request; the clock moves to the model's next event only once every
 * running user's request is in the server, so each user sends its next request at the virtual
 * instant its answer came, as a closed loop's user does, whatever the machine's speed.
 */
export async function serverSteps(serverCase: ServerCurveCase, limits = SHORT_STEP_LIMITS, rule?: SaturationRule): Promise<StepMeasure[]> {
  const clock = new ManualClock();
  let runningUsers = 0;
  let done = false;
  const timing = { now: () => clock.now(), onRunningUsers: (running: number) => (runningUsers = running) };
  return probeServer(serverCase, limits, clock, timing, rule, async (server, probe) => {
    const driving = driveClock(
      clock,
      server,
      () => runningUsers,
      () => done,
    );
    try {
      return await probe();
    } finally {
      done = true;
      await driving;
    }
  });
}

/**
 * The same on the real clock, as the probe measures a service: the server's timers are Node's,
 * and the probe (in the same process) reads performance.now, so that a loaded machine's late
 * timers and slow event loop move the steps as they move a real probe's.
 */
export function serverStepsInRealTime(serverCase: ServerCurveCase, limits = SHORT_STEP_LIMITS): Promise<StepMeasure[]> {
  return probeServer(serverCase, limits, realClock, REAL_TIMING, undefined, (_server, probe) => probe());
}

/** Starts the server on `clock`, runs `around` with it and the probe's steps to run, and closes the server. */
async function probeServer(
  serverCase: ServerCurveCase,
  limits: ProbeLimits,
  clock: Clock,
  timing: StepTiming,
  rule: SaturationRule | undefined,
  around: (server: RunningServer, probe: () => Promise<StepMeasure[]>) => Promise<StepMeasure[]>,
): Promise<StepMeasure[]> {
  const server = await startHttpServer(serverOptions(serverCase), clock);
  try {
    const url = new URL(`http://127.0.0.1:${server.address.port}/api`);
    const sink = { write: () => true };
    return await around(server, async () => [
      ...(await probeSteps(url, serverCase.steps, limits, rule, new AbortController().signal, sink, timing)).steps,
    ]);
  } finally {
    await server.close();
  }
}

function serverOptions(serverCase: ServerCurveCase) {
  const parsed = parseServerArgs(["-listen", "127.0.0.1:0", "-seed", "1", ...serverCase.flags]);
  if (parsed.kind !== "run") throw new Error("unreachable: no help asked for");
  return resolveServerOptions(parsed.values);
}

/** The model the server runs, as its flags set it. */
export function configuredSpec(serverCase: ServerCurveCase): ServerModelSpec {
  return serverModelOf(serverOptions(serverCase));
}

/**
 * How far a fit's parameters are from the server's: (fitted ÷ configured − 1) for the
 * continuous ones, fitted − configured for the integer ones (threads, limit); empty when the
 * fit is of another family.
 */
export function parameterOffsets(configured: ServerModelSpec, fitted: ServerModelSpec): Record<string, number> {
  const ratio = (fittedValue: number, configuredValue: number) => fittedValue / configuredValue - 1;
  if (configured.kind === "queue" && fitted.kind === "queue") {
    return {
      threads: fitted.pool.threads - configured.pool.threads,
      serviceTime: ratio(fitted.pool.serviceTimeMs, configured.pool.serviceTimeMs),
    };
  }
  if (configured.kind === "linear" && fitted.kind === "linear") {
    return {
      baseDelay: ratio(fitted.latency.baseDelayMs, configured.latency.baseDelayMs),
      slope: ratio(fitted.latency.slopeMs, configured.latency.slopeMs),
    };
  }
  if (configured.kind === "exponential" && fitted.kind === "exponential") {
    return {
      limit: fitted.latency.limit - configured.latency.limit,
      baseDelay: ratio(fitted.latency.baseDelayMs, configured.latency.baseDelayMs),
      factor: ratio(fitted.latency.factor, configured.latency.factor),
    };
  }
  return {};
}

/**
 * A "fit" that only joins the points it is given: mean latency interpolated linearly in
 * concurrency between the two nearest, held flat past the ends, throughput by Little's law.
 * Its own error is 0 on every step it was given, whatever the service; what it predicts
 * elsewhere is what a held-out check must catch.
 */
export const joinThePoints: FamilyFitter = (steps) => {
  const sorted = [...steps].sort((a, b) => a.concurrency - b.concurrency);
  return (concurrency) => {
    const above = sorted.findIndex((step) => step.concurrency >= concurrency);
    const upper = sorted[above === -1 ? sorted.length - 1 : above]!;
    const lower = sorted[Math.max(0, above - 1)]!;
    const share = upper === lower || above === -1 ? 1 : (concurrency - lower.concurrency) / (upper.concurrency - lower.concurrency);
    const meanLatencyMs = lower.meanLatencyMs + share * (upper.meanLatencyMs - lower.meanLatencyMs);
    return { meanLatencyMs, throughputPerSec: (concurrency * 1000) / meanLatencyMs };
  };
};

/** Moves the clock to its next event whenever each running user has a request in the server, until `done`. */
async function driveClock(clock: ManualClock, server: RunningServer, runningUsers: () => number, done: () => boolean): Promise<void> {
  while (!done()) {
    await nextTurn();
    const next = clock.nextDueAt();
    if (next !== undefined && runningUsers() > 0 && server.queue.concurrency === runningUsers()) clock.runUntil(next);
  }
}

/** A closed-loop step measured exactly: its latency N ÷ X (Little's law), every percentile that mean. */
export function closedLoopStep(concurrency: number, throughputPerSec: number, requests = 20): StepMeasure {
  const meanLatencyMs = (concurrency * 1000) / throughputPerSec;
  return {
    concurrency,
    throughputPerSec,
    meanLatencyMs,
    p50Ms: meanLatencyMs,
    p90Ms: meanLatencyMs,
    p99Ms: meanLatencyMs,
    requests,
    errors: 0,
  };
}
