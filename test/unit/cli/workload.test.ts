import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { selectWorkload } from "../../../src/cli/workload.ts";

describe("-workload", () => {
  it("is requests without the flag, and -workload requests is dropped so the programs parse as before", () => {
    expect(selectWorkload(["-clients", "5"])).toEqual({ workload: "requests", given: false, args: ["-clients", "5"] });
    expect(selectWorkload(["-workload", "requests", "-clients", "5"])).toEqual({
      workload: "requests",
      given: true,
      args: ["-clients", "5"],
    });
  });

  it("keeps -workload occ for the occ table, in every spelling Go takes", () => {
    for (const argv of [["-workload", "occ"], ["--workload", "occ"], ["-workload=occ"]]) {
      expect(selectWorkload([...argv, "-clients", "5"])).toEqual({
        workload: "occ",
        given: true,
        args: ["-workload", "occ", "-clients", "5"],
      });
    }
  });

  it("refuses an unknown workload or a missing value as a usage error", () => {
    expect(() => selectWorkload(["-workload", "batch"])).toThrow(UsageError);
    expect(() => selectWorkload(["-workload"])).toThrow(/flag needs an argument: -workload/);
  });
});
