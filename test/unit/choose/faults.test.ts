import { describe, expect, it } from "vitest";
import { outageRun } from "../../../src/recommend/measure.ts";
import { parseChooseArgs } from "../../../src/options/choose.ts";
import { parseSchedules, scheduleText } from "../../../src/options/measure.ts";
import { timelineSpec } from "../../../src/recommend/report.ts";
import { renderSvg } from "../../../src/report/report.ts";
import { main } from "../../../src/choose/main.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { anchorRun, capacityCut, METASTABLE_CAPACITY_CUT, simValues } from "../../../src/sim/anchors.ts";
import { configFrom } from "../../../src/options/sim.ts";

/*
 * choose -faults: each schedule (separated by semicolons, times from the run's start as in ./sim)
 * replaces one listed outage, goes by when its last fault ends, and is listed by -list.
 */
function options(args: readonly string[]) {
  const parsed = parseChooseArgs(args);
  if (parsed.kind !== "run") throw new Error("help");
  return parsed.options;
}

describe("choose -faults", () => {
  it("reads schedules separated by semicolons, ordered by when their last fault ends", () => {
    const schedules = parseSchedules("spike@5s+5s*2, errors@0s+20s*0.2; capacity@0s+10s*0.4");
    expect(schedules.map(scheduleText)).toEqual(["capacity@0s+10s*0.4", "errors@0s+20s*0.2, spike@5s+5s*2"]);
    const parsed = options(["-faults", "spike@5s+5s*2, errors@0s+20s*0.2; capacity@0s+10s*0.4"]);
    expect(parsed.outagesMs).toEqual([10_000, 20_000]);
    expect(parsed.schedules).toEqual(schedules);
    expect(options([]).schedules).toBeUndefined();
  });

  it("refuses two schedules ending together, a schedule beside -outages or -validate, and a bad schedule", () => {
    expect(() => options(["-faults", "stop@0s+10s; capacity@5s+5s*0.5"])).toThrow("two schedules end at 10s");
    expect(() => options(["-faults", "stop@0s+10s", "-outages", "5s"])).toThrow("-faults replaces -outages");
    expect(() => options(["-faults", "stop@0s+10s", "-validate"])).toThrow("does not combine with -faults");
    expect(() => options(["-faults", "capacity@0s+10s"])).toThrow(UsageError);
    expect(() => options(["-faults", " ; "])).toThrow("must list at least one schedule");
  });

  it("refuses a fault that names a tier on a single server, as ./sim does, instead of dropping the tier", async () => {
    const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: {} };
    await expect(main(["-faults", "db:crash@1s+1s", "-list"], io as never)).rejects.toThrow(
      new UsageError("-faults: the fault db:crash names a tier, but there is no chain of tiers (a scenario file's tiers:)"),
    );
  });

  it("refuses a spike past the simulator's clients, or an open loop's past its arrivals per second, before any worker runs it", () => {
    expect(() => options(["-faults", "stop@0s+10s; spike@1s+1s*1e308"])).toThrow(
      new UsageError("-faults: the spike spike@1s+1s*1e+308 runs 1e+308 times the 1000 clients; at most 10000000 clients in all"),
    );
    expect(options(["-arrivals", "open", "-rate", "10", "-faults", "spike@1s+1s*100000"]).schedules).toHaveLength(1);
    expect(() => options(["-arrivals", "open", "-rate", "10", "-faults", "spike@1s+1s*1e308"])).toThrow(
      new UsageError(
        "-faults: the spike spike@1s+1s*1e+308 runs 1e+308 times the 10 arrivals per second; at most 1000000 arrivals per second in all",
      ),
    );
  });

  it("-list shows each schedule under the length the tables show it by", async () => {
    let stdout = "";
    const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => true }, env: {} };
    const code = await main(["-model", "queue", "-faults", "capacity@0s+10s*0.4; slow@2s+20s*3", "-list", "-client-only"], io as never);
    expect(code).toBe(0);
    expect(stdout).toContain(
      "outages replaced by fault schedules (times from the run's start):\n  10s      capacity@0s+10s*0.4\n  22s      slow@2s+20s*3\n",
    );
  });

  it(
    "runs a schedule with the times ./sim gives it, judged after its last fault, as ./sim judges the same faults",
    { timeout: 60_000 },
    () => {
      const config = configFrom(simValues(METASTABLE_CAPACITY_CUT));
      const [schedule] = parseSchedules("capacity@30s+10s*0.4");
      const plan = { steadyMs: 30_000, observeMs: 110_000 };
      const { result } = outageRun(config, 1, plan, 40_000, { schedule });
      const sim = anchorRun([...METASTABLE_CAPACITY_CUT, ...capacityCut("10s")], 1);
      expect(result.verdict).toBe("collapsed");
      expect(result.metrics.why).toBe(sim.why);
      expect(result.metrics.peakConcurrencyAfterResume).toBe(sim.peakConcurrencyAfterResume);
    },
  );

  it("the report's timeline shades and names each fault of the schedule", async () => {
    const [schedule] = parseSchedules("capacity@0s+10s*0.4, spike@12s+3s*2");
    const timeline = { id: "fixed", outageMs: 15_000, faults: schedule, stopAtMs: 0, server: [], client: [] };
    const svg = await renderSvg(timelineSpec([timeline]));
    for (const text of ["capacity ×0.4", "spike ×2", "capacity@0s+10s*0.4, spike@12s+3s*2 (shaded), first seed"])
      expect(svg).toContain(text);
  });
});
