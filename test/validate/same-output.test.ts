import { describe, it } from "vitest";
import { expectSameOutput, SAME_OUTPUT_RUNS } from "../helpers/same-output.ts";

/*
 * The runs of scripts/sim-same-output.runs too long for npm test (test/unit/sim/same-output.test.ts
 * runs the others): each prints what test/fixtures/sim-same-output/ holds, with as many events.
 */
describe("the simulator's longest reference runs print what the reference holds", () => {
  for (const { name, argv } of SAME_OUTPUT_RUNS.filter((run) => run.long)) {
    it(name, async () => {
      await expectSameOutput(name, argv);
    });
  }
});
