import { describe, expect, it } from "vitest";
import type { ModelFit } from "../../../src/probe/fit/fit-models.ts";
import type { StepMeasure } from "../../../src/probe/fit/step-measure.ts";
import { AGREEMENT_TOLERANCE, validationTable, validationVerdict } from "../../../src/probe/validate.ts";

/** A queue of 4 threads × 50 ms with 2 ms outside it: 52 ms up to 4 users, then 12.5 ms a user; 80 req/s at most. */
const FIT: ModelFit = {
  spec: {
    kind: "queue",
    pool: { threads: 4, serviceTimeMs: 50, serviceDist: "constant", serviceSigma: 0.5, queueOrder: "fifo", queueLimit: Infinity },
  },
  overheadMs: 2,
  parameters: 3,
  latencyError: 0,
  throughputError: 0,
  meanSquare: 0,
  score: 0,
};

/** A step at `concurrency` whose mean latency is `latencyMs` (its throughput by Little's law). */
function step(concurrency: number, latencyMs: number): StepMeasure {
  const throughputPerSec = (concurrency * 1000) / latencyMs;
  return {
    concurrency,
    throughputPerSec,
    meanLatencyMs: latencyMs,
    p50Ms: latencyMs,
    p90Ms: latencyMs,
    p99Ms: latencyMs,
    requests: 100,
    errors: 0,
  };
}

const MEASURED = [step(1, 52), step(2, 52), step(4, 52), step(8, 100)];

describe("-validate's verdict", () => {
  it("agrees when ./server and the model are within the tolerance at every step, naming the largest difference", () => {
    const server = [step(1, 55), step(2, 56), step(4, 57), step(8, 104)];
    expect(AGREEMENT_TOLERANCE).toBe(0.15);
    expect(validationVerdict(FIT, MEASURED, server)).toBe(
      "validation: agrees: ./server and the model within 15 % of the measured at every step " +
        "(the most, ./server's mean latency at concurrency 4, 9.6 % off the measured)",
    );
  });

  it("disagrees when one column at one step is beyond it, naming which", () => {
    const server = [step(1, 55), step(2, 64), step(4, 57), step(8, 104)];
    expect(validationVerdict(FIT, MEASURED, server)).toBe(
      "validation: disagrees: ./server's mean latency at concurrency 2 is 23.1 % off the measured, beyond 15 %",
    );
  });

  it("disagrees when ./server has no step where the service had one, and the table shows a dash there", () => {
    const server = [step(1, 55), step(2, 56), step(4, 57)];
    expect(validationVerdict(FIT, MEASURED, server)).toBe("validation: disagrees: ./server has no step at concurrency 8");
    const lastRow = validationTable(FIT, MEASURED, server).split("\n").at(-1)!;
    expect(lastRow.trim().split(/ +/)).toEqual(["8", "80.0", "-", "80.0", "100.0", "-", "100.0"]);
  });
});
