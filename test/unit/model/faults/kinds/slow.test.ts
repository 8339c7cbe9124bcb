import { describe, expect, it } from "vitest";
import { parseDuration } from "../../../../../src/cli/duration.ts";
import { conditionsOf, NORMAL_CONDITIONS } from "../../../../../src/model/faults/conditions.ts";
import { faultLabel, parseFaults } from "../../../../../src/model/faults/fault-schedule.ts";
import { slow } from "../../../../../src/model/faults/kinds/slow.ts";

const parse = (text: string) => parseFaults(text, parseDuration);

describe("the slow fault", () => {
  it("multiplies the slow factor, overlapping ones together, and reads it back for the gauge", () => {
    expect(slow.mechanism).toBe("condition");
    expect(conditionsOf(parse("slow@0s+9s*3, slow@1s+9s*2"))).toEqual({ ...NORMAL_CONDITIONS, slowFactor: 6 });
    expect(slow.condition!.read(slow.condition!.bend(NORMAL_CONDITIONS, 3))).toBe(3);
  });

  it("varies the service time, so the model cannot take it as fixed; takes a factor above 0", () => {
    expect(slow.changesServiceTime).toBe(true);
    expect(() => parse("slow@1s+2s*-1")).toThrow("slow needs a factor above 0");
    expect(faultLabel(parse("slow@1s+2s*3")[0]!)).toBe("slow ×3");
  });
});
