import { describe, expect, it } from "vitest";
import { troubleBands } from "../../../src/model/faults/bands.ts";
import { computeMetrics } from "../../../src/model/scenario-metrics.ts";
import type { Phases, ServerSample } from "../../../src/model/timeline.ts";
import { chartSpec, renderSvg, shadedText, type StrategyResult } from "../../../src/report/report.ts";

/*
 * The report marks each fault by kind, a band named stop, crash, capacity ×0.5…, and shows
 * the queue model's queue and threads busy where the samples have them.
 */
const phases: Phases = {
  stopAtMs: 10_000,
  resumeAtMs: 40_000,
  endMs: 60_000,
  faults: [
    { kind: "capacity", atMs: 10_000, durationMs: 20_000, factor: 0.25 },
    { kind: "errors", atMs: 15_000, durationMs: 5_000, factor: 0.2 },
    { kind: "crash", atMs: 35_000, durationMs: 5_000, factor: 1 },
  ],
};
const server: ServerSample[] = Array.from({ length: 60 }, (_, index) => ({
  atMs: (index + 1) * 1_000,
  concurrency: 8 + index,
  lastDelayMs: 20,
  peakConcurrency: 8 + index,
  peakDelayMs: 20,
  queueLength: index,
  threadsBusy: 8,
}));
const result = (samples: readonly ServerSample[], runPhases: Phases): StrategyResult => ({
  strategy: "fixed",
  phases: runPhases,
  server: samples,
  client: [],
  metrics: computeMetrics(samples, [], runPhases, 16),
  concurrencyLimit: 16,
});

describe("fault bands", () => {
  it("one band per fault, named by kind; the one stop of a plain run is the outage", () => {
    expect(troubleBands(phases).map((band) => band.label)).toEqual(["capacity ×0.25", "errors 20 %", "crash"]);
    expect(troubleBands({ stopAtMs: 15_000, resumeAtMs: 35_000, endMs: 95_000 })).toEqual([
      { fromMs: 15_000, toMs: 35_000, label: "outage" },
    ]);
    expect(shadedText(phases)).toBe("shaded: capacity ×0.25 10.0–30.0 s, errors 20 % 15.0–20.0 s, crash 35.0–40.0 s");
  });

  it("the chart names every fault and draws the queue model's queue and threads busy", async () => {
    const svg = await renderSvg(chartSpec(result(server, phases)));
    for (const label of ["capacity ×0.25", "errors 20 %", "crash", "queue waiting and threads busy"]) expect(svg).toContain(label);
    const plain = await renderSvg(
      chartSpec(
        result(
          server.map((sample) => ({ ...sample, queueLength: undefined, threadsBusy: undefined })),
          phases,
        ),
      ),
    );
    expect(plain).not.toContain("queue waiting");
  });
});
