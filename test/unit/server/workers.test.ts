import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { exponentialCurve } from "../../../src/model/servers/kinds/exponential.ts";
import type { ServiceSnapshot } from "../../../src/model/servers/server-model.ts";
import { parseServerArgs, resolveServerProgramOptions } from "../../../src/options/server.ts";
import { wholeServer } from "../../../src/server/workers.ts";

function resolve(args: string[]) {
  const parsed = parseServerArgs(args);
  if (parsed.kind !== "run") throw new Error("help");
  return resolveServerProgramOptions(parsed.values);
}

const snapshot = (concurrency: number, served: number, peakConcurrency = concurrency): ServiceSnapshot => ({
  concurrency,
  lastDelayMs: 0,
  peakConcurrency,
  peakDelayMs: 0,
  admitted: concurrency + served,
  served,
  abandoned: 1,
  abandonedInService: 0,
  cancelled: 0,
  shed: 2,
  expired: 0,
  errorsInjected: 0,
});

describe("./server -workers: one server over several processes", () => {
  it("reads a count or auto, one process by default", () => {
    expect(resolve([]).workers).toBe(1);
    expect(resolve(["-workers", "3"]).workers).toBe(3);
    expect(resolve(["-workers", "auto"]).workers).toBe(availableParallelism());
    expect(() => parseServerArgs(["-workers", "0"])).toThrow(/must be auto or an integer from 1 to 256/);
  });

  it("refuses what one model state over processes does not share, naming it", () => {
    expect(() => resolve(["-workers", "2", "-model", "queue"])).toThrow(/-workers 2: the queue model's threads and queue are one pool/);
    expect(() => resolve(["-workers", "2", "-admin-listen", "127.0.0.1:0"])).toThrow(/fault control/);
    expect(() => resolve(["-workers", "2", "-upstream", "http://127.0.0.1:8071/api"])).toThrow(/middle tier/);
    // Each with one process is fine, and so is the linear model over several.
    expect(resolve(["-workers", "1", "-model", "queue"]).workers).toBe(1);
    expect(resolve(["-workers", "2", "-model", "linear"]).workers).toBe(2);
    // The series add up over the processes (GET /metrics asks the first).
    expect(resolve(["-workers", "2", "-metrics"]).metrics).toBe(true);
  });

  it("reports the whole server: counters added up, the delay the curve's at the whole concurrency", () => {
    const latency = { baseDelayMs: 100, limit: 1, factor: 2, exponentDivisor: 1 };
    const delay = (concurrency: number) => exponentialCurve.delayMs(latency, concurrency);
    const whole = wholeServer([snapshot(3, 10), snapshot(2, 5)], 7, delay);
    expect(whole).toMatchObject({ concurrency: 5, lastDelayMs: 1600, peakConcurrency: 7, peakDelayMs: 6400, served: 15, admitted: 20 });
    expect(whole).toMatchObject({ abandoned: 2, shed: 4 });
    // A peak the counts never carried (between two exchanges): the whole concurrency now is the least, and so is
    // each process's own peak.
    expect(wholeServer([snapshot(3, 0), snapshot(2, 0)], 0, delay).peakConcurrency).toBe(5);
    expect(wholeServer([snapshot(3, 0, 9), snapshot(2, 0)], 4, delay).peakConcurrency).toBe(9);
  });
});
