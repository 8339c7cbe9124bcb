import { describe, expect, it } from "vitest";
import { parseDuration } from "../../../../../src/cli/duration.ts";
import { faultLabel, parseFaults, spikeLoadProblem } from "../../../../../src/model/faults/fault-schedule.ts";
import { spike } from "../../../../../src/model/faults/kinds/spike.ts";

const parse = (text: string) => parseFaults(text, parseDuration);

describe("the spike fault", () => {
  it("is the users' load, not the server's: a factor above 1, held to the programs' limit on load", () => {
    expect(spike.mechanism).toBe("load");
    expect(spike.condition).toBeUndefined();
    expect(spike.keepsServerDelays).toBe(true);
    expect(() => parse("spike@1s+2s*1")).toThrow("spike needs a factor above 1");
    expect(faultLabel(parse("spike@1s+2s*2")[0]!)).toBe("spike ×2");
    const load = { amount: 1000, limit: 1500, unit: "users" };
    expect(spikeLoadProblem(parse("spike@1s+2s*2"), load, String)).toBe(
      "the spike spike@1000+2000*2 runs 2 times the 1000 users; at most 1500 users in all",
    );
    expect(spikeLoadProblem(parse("spike@1s+2s*1.5"), load, String)).toBeUndefined();
  });
});
