import { describe, expect, it } from "vitest";
import { parseDuration } from "../../../../../src/cli/duration.ts";
import { faultLabel, parseFaults } from "../../../../../src/model/faults/fault-schedule.ts";
import { stop } from "../../../../../src/model/faults/kinds/stop.ts";

describe("the stop fault", () => {
  it("is paused and resumed, takes no factor, and leaves the server's conditions alone", () => {
    expect(stop.mechanism).toBe("pause");
    expect(stop.factor).toBeUndefined();
    expect(stop.condition).toBeUndefined();
    expect(() => parseFaults("stop@1s+2s*2", parseDuration)).toThrow("stop takes no factor");
    expect(faultLabel(parseFaults("stop@1s+2s", parseDuration)[0]!)).toBe("stop");
  });

  it("freezes the server's work, so the simulator may not count ahead past the end", () => {
    expect(stop.keepsServerDelays).toBe(false);
    expect(stop.injectsErrors).toBe(false);
  });
});
