import { describe, expect, it } from "vitest";
import { parseDuration } from "../../../../../src/cli/duration.ts";
import { conditionsOf, NORMAL_CONDITIONS } from "../../../../../src/model/faults/conditions.ts";
import { faultLabel, faultName, parseFaults } from "../../../../../src/model/faults/fault-schedule.ts";
import { errors } from "../../../../../src/model/faults/kinds/errors.ts";

const parse = (text: string) => parseFaults(text, parseDuration);

describe("the errors fault", () => {
  it("answers a share with 500: of overlapping ones the largest share wins; the gauge reads 0 when none is on", () => {
    expect(errors.mechanism).toBe("condition");
    expect(errors.injectsErrors).toBe(true);
    expect(conditionsOf(parse("errors@0s+9s*0.2, errors@1s+9s*0.5, errors@2s+9s*0.1"))).toEqual({ ...NORMAL_CONDITIONS, errorRate: 0.5 });
    expect(errors.condition!.read(NORMAL_CONDITIONS)).toBe(0);
  });

  it("takes a share from 0 to 1, labelled in per cent on charts and bare elsewhere", () => {
    expect(() => parse("errors@1s+2s*1.5")).toThrow("errors needs a share from 0 to 1, e.g. errors@10s+30s*0.2");
    const fault = parse("errors@1s+2s*0.125")[0]!;
    expect(faultLabel(fault)).toBe("errors 12.5 %");
    expect(faultName(fault)).toBe("errors ×0.125");
    // Its server keeps its delays: the simulator may count ahead.
    expect(errors.keepsServerDelays).toBe(true);
  });
});
