import { describe, expect, it } from "vitest";
import { spikeSeed } from "../../../src/model/faults/spike-seed.ts";
import { scheduleOf, spikeArgs } from "../../../src/runtime/experiment.ts";

describe("the demo's spike client", () => {
  const spike = { kind: "spike", atMs: 4_000, durationMs: 6_000, factor: 5 } as const;

  it("runs (f − 1) × the herd's users, or (f − 1) × its open-loop rate, with the simulator's spike seed", () => {
    const closed = { arrivals: "closed", clients: 200, ratePerSec: 0, seed: 7 } as const;
    expect(spikeArgs({ load: closed }, spike, 2)).toEqual(["-clients", "800", "-seed", String(spikeSeed(7, 2))]);
    expect(spikeArgs({ load: closed }, { ...spike, factor: 1.001 }, 0)).toEqual(["-clients", "1", "-seed", String(spikeSeed(7, 0))]);
    const open = { arrivals: "open", clients: 0, ratePerSec: 40, seed: 7 } as const;
    expect(spikeArgs({ load: open }, { ...spike, factor: 2 }, 0)).toEqual(["-rate", "40", "-seed", String(spikeSeed(7, 0))]);
  });

  it("is the article's one stop when the plan has no schedule", () => {
    expect(scheduleOf({ steadyMs: 15_000, outageMs: 20_000 })).toEqual([{ kind: "stop", atMs: 15_000, durationMs: 20_000, factor: 1 }]);
    expect(scheduleOf({ steadyMs: 15_000, outageMs: 20_000, faults: [spike] })).toEqual([spike]);
  });
});
