import { describe, expect, it } from "vitest";
import { expectSameOutput, SAME_OUTPUT_RUNS } from "../../helpers/same-output.ts";

/*
 * "Output identical" as a test: the seeded runs of scripts/sim-same-output.runs (every server
 * model, fault kind, deadlines, cancel, shedding, open-loop arrivals, protections, hedging,
 * presets, every strategy, the critical search) print exactly what they printed when
 * test/fixtures/sim-same-output/ was recorded, and fire as many events. A change to the hot
 * path must leave both alone; a change meant to move a figure regenerates the reference
 * (scripts/sim-same-output.sh's header) and says why in its commit.
 */

describe("the simulator prints what its committed reference holds (the runs short enough for npm test)", () => {
  it("reads every run of the list", () => {
    expect(SAME_OUTPUT_RUNS.length).toBeGreaterThanOrEqual(16);
  });

  for (const { name, argv } of SAME_OUTPUT_RUNS.filter((run) => !run.long)) {
    it(name, async () => {
      await expectSameOutput(name, argv);
    });
  }
});
