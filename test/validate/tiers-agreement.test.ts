import { describe, expect, it } from "vitest";
import { CASES, PEAK_TOLERANCE, runCaseJudged } from "./tiers-agreement-runs.ts";

/*
 * Validation, not a correctness test (`npm run validate`; not part of `npm test`): the real chain
 * (npm run demo: one real ./server per tier, the real ./client) against the simulated chain on the
 * same scenario file, scaled down, one case after another (about 20 s each; the cases, the chain and
 * why it is sized so are in tiers-agreement-runs.ts). Per case: the same verdict at every tier, the
 * same tier first to collapse, and each tier's peak load within ±30 %. A case whose real client fell
 * behind is not judged: it agrees with nothing, so it runs once more, and every case must be judged
 * (a case skipped would let the agreement pass on the cases that happened to keep up). The recorded figures: docs/tiers-agreement.json
 * (scripts/tiers-agreement.ts), the table in docs/tiers.md.
 */
describe("the real chain against the simulated chain", () => {
  it("agrees per tier on the verdict, the first collapse and the peak load, for each fault and policy", { timeout: 600_000 }, async () => {
    for (const agreementCase of CASES) {
      const result = await runCaseJudged(agreementCase);
      const both = `${result.policy} ${result.fault}: ${JSON.stringify({ real: result.real, sim: result.sim })}`;
      console.log(`${result.judged ? (result.agrees ? "agrees" : "differs") : "not judged"}: ${both}`);
      const busy = "the real client fell behind in both runs (demo verdict invalid): the machine was too busy to judge this case";
      expect.soft(result.judged, `${busy}: ${both}`).toBe(true);
      if (!result.judged) continue;
      expect
        .soft(
          result.real.tiers.map((tier) => tier.verdict),
          both,
        )
        .toEqual(result.sim.tiers.map((tier) => tier.verdict));
      expect.soft(result.real.firstCollapsed, both).toBe(result.sim.firstCollapsed);
      for (const [index, ratio] of result.peakRatios.entries()) {
        expect.soft(ratio, `${result.real.tiers[index]!.name}: ${both}`).not.toBeNull();
        expect
          .soft(Math.abs(ratio! - 1), `${result.real.tiers[index]!.name} peak load, sim ÷ real: ${both}`)
          .toBeLessThanOrEqual(PEAK_TOLERANCE);
      }
      // The report says which tier collapsed first and why: the faulted tier, by its own fault.
      const faulted = agreementCase.fault.split(":")[0]!;
      if (result.real.firstCollapsed !== null) {
        expect
          .soft(result.real.firstCollapsedText, both)
          .toMatch(new RegExp(`^first to collapse: ${faulted} at .* by its own fault ${agreementCase.fault.replace(/[*+]/g, "\\$&")}$`));
      }
    }
  });
});
