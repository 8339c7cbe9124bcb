import { describe, expect, it } from "vitest";
import { parseDuration } from "../../../../../src/cli/duration.ts";
import { conditionsOf, NORMAL_CONDITIONS } from "../../../../../src/model/faults/conditions.ts";
import { faultLabel, parseFaults } from "../../../../../src/model/faults/fault-schedule.ts";
import { capacity } from "../../../../../src/model/faults/kinds/capacity.ts";

const parse = (text: string) => parseFaults(text, parseDuration);

describe("the capacity fault", () => {
  it("multiplies the capacity factor, overlapping ones together, and reads it back for the gauge", () => {
    expect(capacity.mechanism).toBe("condition");
    const halved = capacity.condition!.bend(NORMAL_CONDITIONS, 0.5);
    expect(halved).toEqual({ ...NORMAL_CONDITIONS, capacityFactor: 0.5 });
    expect(conditionsOf(parse("capacity@0s+9s*0.5, capacity@1s+9s*0.5"))).toEqual({ ...NORMAL_CONDITIONS, capacityFactor: 0.25 });
    expect(capacity.condition!.read(halved)).toBe(0.5);
    expect(capacity.condition!.read(NORMAL_CONDITIONS)).toBe(1);
  });

  it("takes a factor above 0, labelled ×f", () => {
    expect(() => parse("capacity@1s+2s*0")).toThrow("capacity needs a factor above 0, e.g. capacity@10s+30s*0.5");
    expect(faultLabel(parse("capacity@1s+2s*0.25")[0]!)).toBe("capacity ×0.25");
    expect(capacity.keepsServerDelays).toBe(false);
  });
});
