import { describe, expect, it } from "vitest";
import { parseDuration } from "../../../../../src/cli/duration.ts";
import { faultLabel, parseFaults } from "../../../../../src/model/faults/fault-schedule.ts";
import { crash } from "../../../../../src/model/faults/kinds/crash.ts";

describe("the crash fault", () => {
  it("kills the server and starts it again, takes no factor, and empties the server (no counting ahead)", () => {
    expect(crash.mechanism).toBe("restart");
    expect(crash.factor).toBeUndefined();
    expect(crash.condition).toBeUndefined();
    expect(crash.keepsServerDelays).toBe(false);
    expect(() => parseFaults("crash@1s+2s*0.5", parseDuration)).toThrow("crash takes no factor");
    expect(faultLabel(parseFaults("db:crash@1s+2s", parseDuration)[0]!)).toBe("db: crash");
  });
});
