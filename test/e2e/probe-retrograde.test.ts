import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { spawnCli } from "../helpers/spawn-cli.ts";
import {
  hasDebianGunicorn,
  RETROGRADE_PROBE_FLAGS,
  type RetrogradeService,
  startRetrogradeService,
  uslPickedFigures,
} from "../helpers/retrograde-service.ts";
import { temporaryDir } from "../helpers/temporary-dirs.ts";

/*
 * On a real service whose throughput falls past a peak (Debian's gunicorn and SQLite:
 * test/helpers/retrograde-service.ts), the probe steps past its peak, sees the fall, picks a curve
 * that falls (the USL, or the exponential model where it fits better by more than the floor: on this
 * service the two trade places from run to run, docs/probe.md), prints the USL's peak beside the
 * measured one, and writes the picked model in the scenario. A file of its own: its load would
 * disturb the other probes' timings.
 */

describe("probe on a service whose throughput falls past a peak", () => {
  let service: RetrogradeService | undefined;
  // Its own process group, stopped here whether the probe passed or not (a failing beforeAll runs no afterEach).
  afterAll(() => service?.stop());
  let run = { code: 0 as number | string, stdout: [] as string[], stderr: "", scenario: "" };

  beforeAll(async () => {
    expect(hasDebianGunicorn(), "needs Debian's gunicorn: apt-get install python3-gunicorn").toBe(true);
    service = await startRetrogradeService();
    const out = join(temporaryDir("thundering-herd-retrograde-"), "service.yaml");
    const probe = spawnCli("probe", [...RETROGRADE_PROBE_FLAGS, "-out", out, service.url]);
    const code = await probe.exited;
    // Read here: the folder goes with the first test's clean-up.
    run = { code, stdout: probe.stdoutLines, stderr: probe.stderrLines.join("\n"), scenario: code === 0 ? readFileSync(out, "utf8") : "" };
  }, 60_000);

  it("steps past the peak, sees the throughput fall by more than the picker's floor, and picks a curve that falls", () => {
    const output = `${run.stderr}\n${run.stdout.join("\n")}`;
    expect(run.code, output).toBe(0);
    const steps = run.stdout.filter((line) => line.startsWith("concurrency "));
    const rates = steps.map((line) => Number(/([\d.]+) req\/s/.exec(line)![1]));
    expect(rates.at(-1)!, output).toBeLessThan(0.95 * Math.max(...rates));
    expect(
      run.stdout.find((line) => line.startsWith("picked ")),
      output,
    ).toMatch(/^picked (usl|exponential): model \1 \(/);
    expect(output).toMatch(/the throughput falls past its peak \([\d.]+ req\/s at \d+ users, [\d.]+ at \d+/);
  });

  it("prints the USL's peak beside the measured one where it picks the USL, and writes the picked model in the scenario", () => {
    const picked = /^picked (\w+):/.exec(run.stdout.find((line) => line.startsWith("picked ")) ?? "")?.[1];
    const system = (parse(run.scenario) as { system: Record<string, unknown> } | null)?.system;
    expect(system?.model, run.stdout.join("\n")).toBe(picked);
    if (picked !== "usl") return;
    const figures = uslPickedFigures(run.stdout);
    expect(figures, run.stdout.join("\n")).toBeDefined();
    expect(system!["usl-kappa"]).toBeGreaterThan(0);
    expect(system!.baseDelay).toMatch(/^[\d.]+m?s$/);
  });
});
