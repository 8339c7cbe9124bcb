import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "../../../../src/cli/duration.ts";
import { conditionsOf, NORMAL_CONDITIONS } from "../../../../src/model/faults/conditions.ts";
import {
  type Fault,
  faultLabel,
  faultsOfTier,
  FaultSyntaxError,
  formatFault,
  parseFaults,
  tierProblem,
} from "../../../../src/model/faults/fault-schedule.ts";

const parse = (text: string) => parseFaults(text, parseDuration);

describe("parseFaults", () => {
  it("refuses more than 1000 faults before reading them, and reads 1000 overlapping ones", () => {
    const schedule = (count: number) => Array.from({ length: count }, (_, index) => `slow@${index}ms+100s*2`).join(",");
    expect(() => parse(schedule(1001))).toThrow(new FaultSyntaxError("more than 1000 faults; a schedule lists at most 1000"));
    expect(parse(schedule(1000))).toHaveLength(1000);
  });

  it("reads kind@start+length[*factor], several separated by commas, in order of start", () => {
    expect(parse("spike@60s+5s*2, stop@15s+20s")).toEqual([
      { kind: "stop", atMs: 15_000, durationMs: 20_000, factor: 1 },
      { kind: "spike", atMs: 60_000, durationMs: 5_000, factor: 2 },
    ]);
    expect(parse("crash@1m+30s")).toEqual([{ kind: "crash", atMs: 60_000, durationMs: 30_000, factor: 1 }]);
    expect(parse("capacity@10s+1m*0.4,slow@10s+5s*3,errors@0s+2s*0.25").map((fault) => [fault.kind, fault.factor])).toEqual([
      ["errors", 0.25],
      ["capacity", 0.4],
      ["slow", 3],
    ]);
  });

  it("writes a fault back as it reads", () => {
    for (const text of ["stop@15s+20s", "spike@1m0s+5s*2", "errors@10s+2s*0.3"]) {
      expect(parse(text).map((fault) => formatFault(fault, formatDuration))).toEqual([text]);
    }
  });

  it("refuses what it cannot read with a message naming the part and the rule", () => {
    const cases: [string, string][] = [
      ["", "must list at least one fault"],
      ["stop@15s", '"stop@15s" is not kind@start+length[*factor]'],
      ["melt@1s+2s", "unknown fault melt; one of stop, crash, capacity, slow, errors, spike"],
      ["stop@soon+2s", 'the start "soon" is not a duration'],
      ["stop@1s+0s", "the length must be above 0"],
      ["stop@1s+2s*2", "stop takes no factor"],
      ["spike@1s+2s", "spike needs a factor above 1"],
      ["spike@1s+2s*0.5", "spike needs a factor above 1"],
      ["errors@1s+2s*1.5", "errors needs a share from 0 to 1"],
      ["capacity@1s+2s*0", "capacity needs a factor above 0"],
    ];
    for (const [text, message] of cases) {
      expect(() => parse(text)).toThrow(FaultSyntaxError);
      expect(() => parse(text)).toThrow(message);
    }
  });
});

describe("fault conditions", () => {
  const fault = (kind: Fault["kind"], factor: number): Fault => ({ kind, atMs: 0, durationMs: 1, factor });

  it("multiply the factors of overlapping faults and keep the largest error share", () => {
    expect(conditionsOf([])).toEqual(NORMAL_CONDITIONS);
    expect(
      conditionsOf([fault("capacity", 0.5), fault("capacity", 0.5), fault("slow", 3), fault("errors", 0.1), fault("errors", 0.3)]),
    ).toEqual({ capacityFactor: 0.25, slowFactor: 3, errorRate: 0.3 });
  });
});

describe("faults on a tier of a chain", () => {
  it("reads a tier's name before the kind; no prefix is the edge, as before", () => {
    expect(parse("db:stop@15s+20s, api:slow@10s+30s*4, errors@1s+2s*0.5")).toEqual([
      { kind: "errors", atMs: 1_000, durationMs: 2_000, factor: 0.5 },
      { kind: "slow", atMs: 10_000, durationMs: 30_000, factor: 4, tier: "api" },
      { kind: "stop", atMs: 15_000, durationMs: 20_000, factor: 1, tier: "db" },
    ]);
    for (const text of ["db:stop@15s+20s", "api:slow@10s+30s*4"]) {
      expect(parse(text).map((fault) => formatFault(fault, formatDuration))).toEqual([text]);
    }
    expect(faultLabel(parse("db:errors@1s+2s*0.2")[0]!)).toBe("db: errors 20 %");
  });

  it("refuses a tier name that is not a plain name", () => {
    expect(() => parse("DB:stop@1s+2s")).toThrow(/the tier "DB" is not a name of lower-case letters, digits, - and _/);
    expect(() => parse(":stop@1s+2s")).toThrow(/the tier "" is not a name/);
  });

  it("gives each tier its own faults, the edge also those with no prefix, and names a tier the chain lacks", () => {
    const faults = parse("stop@1s+2s, edge:slow@1s+2s*2, db:crash@5s+1s");
    expect(faultsOfTier(faults, "edge", true).map((fault) => fault.kind)).toEqual(["stop", "slow"]);
    expect(faultsOfTier(faults, "db", false).map((fault) => fault.kind)).toEqual(["crash"]);
    expect(faultsOfTier(faults, "api", false)).toEqual([]);
    expect(tierProblem(faults, ["edge", "api", "db"])).toBeUndefined();
    expect(tierProblem(faults, ["edge", "api"])).toBe("the fault db:crash names no tier of the chain (edge, api)");
    expect(tierProblem(faults, [])).toMatch(/^the fault edge:slow names a tier, but there is no chain of tiers/);
    expect(tierProblem(parse("stop@1s+2s"), [])).toBeUndefined();
  });
});
