import { describe, expect, it } from "vitest";
import { fitModels } from "../../../../src/probe/fit/fit-models.ts";
import { probeOutput } from "../../../../src/probe/from/probe-output.ts";
import { loadTestFixture } from "./fixture.ts";

describe("the probe's own output, kept from an earlier probe", () => {
  const text = loadTestFixture("probe-gunicorn.txt");

  it("reads its printed steps (the mean by Little's law), and refits them to the model that probe picked: gunicorn's 4 workers", () => {
    expect(probeOutput.recognizes(text)).toBe(true);
    const { steps, assumed } = probeOutput.read(text);
    expect(steps.map((step) => [step.concurrency, step.throughputPerSec, step.p99Ms, step.errors])).toEqual([
      [1, 18.7, 61.9, 0],
      [2, 37.5, 60.6, 0],
      [4, 75.9, 57.6, 0],
      [8, 79.6, 105.3, 0],
    ]);
    expect(steps[0]!.meanLatencyMs).toBeCloseTo(1000 / 18.7, 9);
    expect(assumed).toEqual([expect.stringContaining("Little's law")]);
    const { chosen } = fitModels(steps);
    expect(chosen.spec).toMatchObject({ kind: "queue", pool: { threads: 4 } });
  });

  it("reads a step whose percentiles were n/a, and counts answers back from an error share", () => {
    const { steps, assumed } = probeOutput.read("concurrency    4:     75.9 req/s, p50 n/a, p90 n/a, p99 57.6 ms, errors 8 (2.0 %)\n");
    expect(steps[0]).toMatchObject({ requests: 400, errors: 8, p99Ms: 57.6 });
    expect(Number.isNaN(steps[0]!.p50Ms)).toBe(true);
    expect(assumed[1]).toMatch(/^p50, p90: not in the file/);
  });

  it("takes a step printed twice (measured again, a dip) as its later line, in the first one's place", () => {
    const { steps } = probeOutput.read(
      [
        "concurrency   12:    181.7 req/s, p50 61.0 ms, p90 80.0 ms, p99 99.0 ms, errors 0 (0.0 %)",
        "concurrency   13:     89.5 req/s, p50 70.0 ms, p90 90.0 ms, p99 900.0 ms, errors 0 (0.0 %)",
        "concurrency   14:    175.5 req/s, p50 77.0 ms, p90 99.0 ms, p99 120.0 ms, errors 0 (0.0 %)",
        "concurrency   13:    180.1 req/s, p50 70.0 ms, p90 90.0 ms, p99 110.0 ms, errors 0 (0.0 %)",
      ].join("\n"),
    );
    expect(steps.map((step) => [step.concurrency, step.throughputPerSec])).toEqual([
      [12, 181.7],
      [13, 180.1],
      [14, 175.5],
    ]);
  });
});
