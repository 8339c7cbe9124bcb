import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { probeOutput } from "../../src/probe/from/probe-output.ts";
import { REALTIME_PREFIX } from "../../harness/realtime.ts";
import { REPO_ROOT, spawnCli } from "../helpers/spawn-cli.ts";
import {
  hasDebianGunicorn,
  RETROGRADE_PROBE_FLAGS,
  RETROGRADE_SETTINGS,
  type RetrogradeService,
  startRetrogradeService,
  uslPickedFigures,
} from "../helpers/retrograde-service.ts";
import { temporaryDir } from "../helpers/temporary-dirs.ts";

/*
 * On a real service whose throughput falls past a peak (Debian's gunicorn, each request doing work
 * for every request in flight under a shared lock: test/helpers/retrograde-service.ts), the probe
 * steps past its peak, sees the fall, measures the peak between its steps, picks the USL and prints
 * its peak beside the measured one, within 15 %, and writes the USL in the scenario. A file of its
 * own: its load would disturb the other probes' timings.
 *
 * The service and the probe run at real-time priority where the machine allows it (chrt -r 10,
 * harness/realtime.ts), as the validation runs do; where it does not, MOST_PROBES alone covers the
 * misses. The service's work is all CPU, and inside a full e2e run its curve bent: in three full runs
 * at ordinary priority on 2026-11-29 the test took 3, 2 and 3 probes (37 s, 22 s, 35 s), against one
 * probe in every run of the file alone; in a fourth, where it ran first, vitest's own processes used
 * 80 % and 66 % of a core as it began, and the probe found the peak at 5 users, not the 6.5 to 7 of
 * ten probes alone that day. Which work beside it bent the curve in the other runs was not measured.
 * At real-time priority it took one probe in three full runs of four (+3.2 %, -1.2 %, and a CI run's), two in the fourth.
 */

/**
 * Probes of the service at most, where one misses the USL's peak (below). On 2026-11-29 this machine's
 * probes missed it about two times in five (the measured top, the middle of the steps within 10 % of the
 * best, fell half a step below the fitted peak: 4.5 users against 5.26), at the session's first commit
 * as at its last; one CI run missed three in a row. Five keep that to about 1 %.
 */
const MOST_PROBES = 5;

/** The issue's tolerance on the USL's peak against the measured one. */
const PEAK_TOLERANCE = 0.15;

interface Run {
  readonly code: number | string;
  readonly stdout: readonly string[];
  readonly stderr: string;
  readonly scenario: string;
}

describe("probe on a service whose throughput falls past a peak", () => {
  let service: RetrogradeService | undefined;
  // Its own process group, stopped here whether the probe passed or not (a failing beforeAll runs no afterEach).
  afterAll(() => service?.stop());
  const runs: Run[] = [];

  const probe = async (): Promise<Run> => {
    const out = join(temporaryDir("thundering-herd-retrograde-"), "service.yaml");
    const args = ["-no-overload", ...RETROGRADE_PROBE_FLAGS, "-out", out, service!.url];
    const [command, ...rest] = [...REALTIME_PREFIX, resolve(REPO_ROOT, "probe"), ...args];
    const run = spawnCli("probe", rest, { command: command! });
    const code = await run.exited;
    // Read here: the folder goes with the first test's clean-up.
    return { code, stdout: run.stdoutLines, stderr: run.stderrLines.join("\n"), scenario: code === 0 ? readFileSync(out, "utf8") : "" };
  };
  const uslWithin = (run: Run) => {
    const figures = uslPickedFigures(run.stdout);
    return figures !== undefined && Math.abs(figures.off) <= PEAK_TOLERANCE;
  };

  beforeAll(async () => {
    expect(hasDebianGunicorn(), "needs Debian's gunicorn: apt-get install python3-gunicorn").toBe(true);
    service = await startRetrogradeService(RETROGRADE_SETTINGS, REALTIME_PREFIX);
    // A probe's steps of half a second on a busy machine can miss the fall or place the top a step
    // off (docs/probe.md: one time in two at load average 5 to 9 here): a run that does is repeated, at most four times, and the
    // last must hold.
    for (let attempt = 0; attempt < MOST_PROBES && !runs.some(uslWithin); attempt++) runs.push(await probe());
  }, 120_000);

  it("steps past the peak, sees the throughput fall by more than the picker's floor, and picks the USL", () => {
    const run = runs.at(-1)!;
    const output = `${runs.map((each) => `${each.stderr}\n${each.stdout.join("\n")}`).join("\n---\n")}`;
    expect(run.code, output).toBe(0);
    // The steps as the probe's own reader takes them (a step measured again: its later line).
    const steps = probeOutput.read(run.stdout.join("\n")).steps;
    const highest = steps.reduce((top, step) => (step.concurrency > top.concurrency ? step : top));
    // The highest step's throughput is below the best's by more than the 5 % floor.
    expect(highest.throughputPerSec, output).toBeLessThan(0.95 * Math.max(...steps.map((step) => step.throughputPerSec)));
    expect(
      run.stdout.find((line) => line.startsWith("picked ")),
      output,
    ).toMatch(/^picked usl: model usl \(baseDelay \S+, sigma \S+, kappa \S+\)/);
  });

  it("prints the USL's peak beside the measured one, within 15 %, and writes the USL in the scenario", () => {
    const run = runs.at(-1)!;
    const figures = uslPickedFigures(run.stdout);
    expect(figures, run.stdout.join("\n")).toBeDefined();
    expect(Math.abs(figures!.off), run.stdout.join("\n")).toBeLessThanOrEqual(PEAK_TOLERANCE);
    const system = (parse(run.scenario) as { system: Record<string, unknown> }).system;
    expect(system.model).toBe("usl");
    expect(system["usl-kappa"]).toBeGreaterThan(0);
    expect(system.baseDelay).toMatch(/^[\d.]+m?s$/);
  });
});
