/**
 * Records `thundering-herd probe` against a real service whose throughput falls past a peak
 * (docs/probe.md, "A service whose throughput falls"): Debian's gunicorn serving
 * test/fixtures/retrograde/app.py, whose every request does work for each request in flight
 * under an flock (test/helpers/retrograde-service.ts), on a free loopback port. Runs the probe in this process
 * with -out, stops gunicorn by its process group, and writes the steps, the fits, the pick, the
 * USL's peak beside the measured one, the scenario and how it was recorded (commit, machine, load)
 * to docs/probe-retrograde.json.
 *
 *   node --import ./src/register-tsx.mjs scripts/probe-retrograde.ts [probe flags]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { probeLines, writeResultsFile } from "./probe-for-results.ts";
import { FAMILY_NOISE_FLOOR } from "../src/probe/fit/fit-models.ts";
import { probeOutput } from "../src/probe/from/probe-output.ts";
import { measuredPeak } from "../src/probe/fit/usl.ts";
import { provenance } from "../src/runtime/provenance.ts";
import {
  RETROGRADE_PROBE_FLAGS,
  RETROGRADE_SETTINGS,
  startRetrogradeService,
  uslPickedFigures,
} from "../test/helpers/retrograde-service.ts";

const FILE = "docs/probe-retrograde.json";
/** The tolerance on the USL's peak against the measured one. */
const PEAK_TOLERANCE = 0.15;

const dir = mkdtempSync(join(tmpdir(), "probe-retrograde-"));
const service = await startRetrogradeService();
const recordedAt = provenance();
const loadBefore = loadavg()[0]!;
try {
  const scenarioFile = join(dir, "service.yaml");
  // The steps and the fit are what this file holds; the phase past saturation has its own test.
  const probeArgs = ["-no-overload", ...RETROGRADE_PROBE_FLAGS, ...process.argv.slice(2), "-out", scenarioFile, service.url];
  const { code, lines } = await probeLines(probeArgs);
  if (code !== 0) process.exit(code);
  // In order of concurrency: the steps around the peak come after the steps they lie between.
  const steps = [...probeOutput.read(lines.join("\n")).steps].sort((a, b) => a.concurrency - b.concurrency);
  const best = steps.reduce((top, step) => (step.throughputPerSec > top.throughputPerSec ? step : top));
  // The USL's peak, printed whichever curve was picked, beside the measured one (usl.ts measuredPeak).
  const fittedPeak = Number(/peak at ([\d.]+) users/.exec(lines.find((line) => line.startsWith("USL (Gunther)")) ?? "")?.[1]);
  const measured = measuredPeak(steps);
  // As the probe printed it where it picked the USL (from the unrounded peaks), else from the printed peak.
  const off = uslPickedFigures(lines)?.off ?? fittedPeak / measured.concurrency - 1;
  const scenario = readFileSync(scenarioFile, "utf8");
  const summary = {
    provenance: { ...recordedAt, loadAverage: [Number(loadBefore.toFixed(2)), Number(loadavg()[0]!.toFixed(2))] },
    service: {
      server: `gunicorn ${service.version} (Debian), ${RETROGRADE_SETTINGS.workers} sync workers`,
      app:
        `test/fixtures/retrograde/app.py: waits ${RETROGRADE_SETTINGS.sleepMs} ms, then under an flock on a shared state file computes ` +
        `${RETROGRADE_SETTINGS.work} rounds of SHA-256 plus ${RETROGRADE_SETTINGS.workPerRequest} for each request in flight`,
    },
    command: `npm run probe -- ${probeArgs.map((arg) => (arg === scenarioFile ? "service.yaml" : arg)).join(" ")}`,
    steps: steps.map(({ concurrency, throughputPerSec, p50Ms, p90Ms, p99Ms, errors }) => ({
      concurrency,
      throughputPerSec,
      p50Ms,
      p90Ms,
      p99Ms,
      errors,
    })),
    falls: steps.at(-1)!.throughputPerSec < (1 - FAMILY_NOISE_FLOOR) * best.throughputPerSec,
    fallPerCent: Number((100 * (1 - steps.at(-1)!.throughputPerSec / best.throughputPerSec)).toFixed(1)),
    picked:
      lines
        .find((line) => line.startsWith("picked "))
        ?.split(":")[0]
        ?.slice("picked ".length) ?? "none",
    peak: {
      measuredPerSec: best.throughputPerSec,
      measuredConcurrency: Number(measured.concurrency.toFixed(2)),
      measuredHow: measured.how,
      bestStepConcurrency: best.concurrency,
      topConcurrencies: measured.top,
      uslConcurrency: fittedPeak,
      offPerCent: Number((100 * off).toFixed(1)),
      tolerancePerCent: 100 * PEAK_TOLERANCE,
      within: Math.abs(off) <= PEAK_TOLERANCE,
    },
    fits: lines.filter((line) => /^(fit |USL|held out|picked |measured saturation)/.test(line)),
    system: (parse(scenario) as { system: unknown }).system,
    output: lines,
    scenario,
  };
  writeResultsFile(FILE, summary);
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
