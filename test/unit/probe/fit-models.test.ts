import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../src/backoff/random.ts";
import type { ServerModelSpec } from "../../../src/model/servers/models.ts";
import { closedLoopLatencyMs } from "../../../src/probe/fit/closed-loop-curve.ts";
import { fitModels } from "../../../src/probe/fit/fit-models.ts";
import type { StepMeasure } from "../../../src/probe/fit/step-measure.ts";
import { closedLoopStep } from "../../helpers/server-steps.ts";

/**
 * Steps as a probe would measure them from a model with known parameters: the model's mean
 * latency at each concurrency (plus `overheadMs` outside the service), off by up to ±`noise`
 * (seeded), the throughput from Little's law on that latency, and the percentiles of a
 * lognormal of that `sigma` around the mean.
 */
function stepsOf(spec: ServerModelSpec, concurrencies: readonly number[], noise = 0.02, sigma = 0.01, overheadMs = 0): StepMeasure[] {
  const random = seededRandom(7);
  return concurrencies.map((concurrency) => {
    const meanLatencyMs = closedLoopLatencyMs(spec, concurrency, overheadMs) * (1 + noise * (2 * random.uniform() - 1));
    return {
      concurrency,
      throughputPerSec: (concurrency * 1000) / meanLatencyMs,
      meanLatencyMs,
      p50Ms: meanLatencyMs,
      p90Ms: meanLatencyMs * Math.exp(1.2816 * sigma),
      p99Ms: meanLatencyMs * Math.exp(2.3263 * sigma),
      requests: 500,
      errors: 0,
    };
  });
}

const queue = (threads: number, serviceTimeMs: number): ServerModelSpec => ({
  kind: "queue",
  pool: { threads, serviceTimeMs, serviceDist: "constant", serviceSigma: 0.5, queueOrder: "fifo", queueLimit: Infinity },
});

describe("fitModels", () => {
  it.each([
    [4, 20, [1, 2, 4, 8]],
    [8, 50, [1, 2, 4, 8, 16]],
    [3, 10, [1, 2, 4, 8]],
    [12, 5, [1, 2, 4, 8, 16, 32]],
  ] as const)("recovers a queue of %i threads × %i ms from steps %j, and picks it", (threads, serviceTimeMs, concurrencies) => {
    const result = fitModels(stepsOf(queue(threads, serviceTimeMs), concurrencies));
    expect(result.chosen.spec.kind).toBe("queue");
    if (result.chosen.spec.kind !== "queue") return;
    expect(result.chosen.spec.pool.threads).toBe(threads);
    expect(result.chosen.spec.pool.serviceTimeMs).toBeGreaterThan(serviceTimeMs * 0.97);
    expect(result.chosen.spec.pool.serviceTimeMs).toBeLessThan(serviceTimeMs * 1.03);
    expect(result.chosen.latencyError).toBeLessThan(0.03);
    expect(result.spread.dist).toBe("constant");
  });

  it("tells the service time from the time outside the service (network, client), and still counts the threads", () => {
    const result = fitModels(stepsOf(queue(4, 50), [1, 2, 4, 8, 16], 0.02, 0.01, 7));
    expect(result.chosen.spec.kind === "queue" && result.chosen.spec.pool.threads).toBe(4);
    expect(result.chosen.spec.kind === "queue" && result.chosen.spec.pool.serviceTimeMs).toBeGreaterThan(50 * 0.97);
    expect(result.chosen.spec.kind === "queue" && result.chosen.spec.pool.serviceTimeMs).toBeLessThan(50 * 1.03);
    expect(result.chosen.overheadMs).toBeGreaterThan(5);
    expect(result.chosen.overheadMs).toBeLessThan(9);
  });

  it("recovers a lognormal spread from the lowest step's p90 ÷ p50", () => {
    const sigma = 0.5;
    const result = fitModels(stepsOf(queue(4, 20), [1, 2, 4, 8], 0.02, sigma));
    expect(result.spread).toEqual({ dist: "lognormal", sigma });
    expect(result.chosen.spec.kind === "queue" && result.chosen.spec.pool.serviceDist).toBe("lognormal");
  });

  it.each([
    [20, 5],
    [1000, 10],
    [2, 0.5],
  ])("recovers a linear model of baseDelay %s ms + slope %s ms, and picks it", (baseDelayMs, slopeMs) => {
    const spec: ServerModelSpec = { kind: "linear", latency: { kind: "linear", baseDelayMs, slopeMs } };
    const result = fitModels(stepsOf(spec, [1, 2, 4, 8, 16, 32, 64], 0.01));
    expect(result.chosen.spec.kind).toBe("linear");
    if (result.chosen.spec.kind !== "linear") return;
    expect(result.chosen.spec.latency.slopeMs / slopeMs).toBeGreaterThan(0.95);
    expect(result.chosen.spec.latency.slopeMs / slopeMs).toBeLessThan(1.05);
    expect(result.chosen.spec.latency.baseDelayMs / baseDelayMs).toBeGreaterThan(0.9);
    expect(result.chosen.spec.latency.baseDelayMs / baseDelayMs).toBeLessThan(1.1);
  });

  it("recovers an exponential model's limit, baseDelay and growth, and picks it", () => {
    const spec: ServerModelSpec = { kind: "exponential", latency: { baseDelayMs: 100, limit: 30, factor: 1.5, exponentDivisor: 15 } };
    const result = fitModels(stepsOf(spec, [1, 2, 4, 8, 16, 32, 40, 48, 56, 64, 72, 80], 0.01));
    expect(result.chosen.spec.kind).toBe("exponential");
    if (result.chosen.spec.kind !== "exponential") return;
    const fitted = result.chosen.spec.latency;
    expect(fitted.limit).toBeGreaterThanOrEqual(28);
    expect(fitted.limit).toBeLessThanOrEqual(32);
    expect(fitted.baseDelayMs / 100).toBeGreaterThan(0.97);
    expect(fitted.baseDelayMs / 100).toBeLessThan(1.03);
    expect(fitted.exponentDivisor).toBe(15);
    expect(fitted.factor).toBeGreaterThan(1.4);
    expect(fitted.factor).toBeLessThan(1.6);
  });

  it("states each model's error, the wrong families' larger than the right one's", () => {
    const result = fitModels(stepsOf(queue(4, 20), [1, 2, 4, 8, 16], 0));
    expect(result.fits.map((fit) => fit.spec.kind)).toEqual(["queue", "linear", "exponential"]);
    const byKind = Object.fromEntries(result.fits.map((fit) => [fit.spec.kind, fit.latencyError]));
    expect(byKind.queue).toBeLessThan(1e-3);
    expect(byKind.linear).toBeGreaterThan(0.1);
  });

  it("takes a soft knee measured on a loaded machine (gunicorn, 4 sync workers, 50 ms) for the queue it is, not for the exponential curve", () => {
    // concurrency, req/s, p50, p90, p99 as the probe printed them in test/e2e/probe.test.ts on a 2-core machine at load 15.
    const printed = [
      [1, 16.9, 55.4, 75.7, 90.0],
      [2, 33.1, 57.6, 73.2, 91.0],
      [4, 61.0, 61.7, 79.9, 141.6],
      [8, 77.3, 102.2, 112.4, 114.5],
      [16, 78.2, 208.4, 216.0, 237.6],
    ] as const;
    const steps = printed.map(([concurrency, throughputPerSec, p50Ms, p90Ms, p99Ms]) => ({
      concurrency,
      throughputPerSec,
      meanLatencyMs: (concurrency * 1000) / throughputPerSec,
      p50Ms,
      p90Ms,
      p99Ms,
      requests: 200,
      errors: 0,
    }));
    const result = fitModels(steps);
    expect(result.chosen.spec.kind === "queue" && result.chosen.spec.pool.threads).toBe(4);
  });

  it("fits steps whose throughput falls steeply, where the exponential curve's solver finds its matrix singular", () => {
    // As a loaded machine measured a service on loopback in probe-output.test.ts: the probe ended with "LU matrix is singular".
    const result = fitModels([closedLoopStep(1, 145.5), closedLoopStep(2, 300), closedLoopStep(4, 40)]);
    expect(result.fits.map((fit) => fit.spec.kind)).toEqual(["queue", "linear", "exponential"]);
    expect(result.chosen.spec.kind).not.toBe("exponential");
  });

  it("refuses fewer than three steps", () => {
    expect(() => fitModels(stepsOf(queue(4, 20), [1, 2]))).toThrow(/at least 3 steps/);
  });
});
