import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ChildProgram } from "../../src/runtime/child-program.ts";

/**
 * A real service whose throughput falls past a peak (docs/probe.md, "A service whose throughput
 * falls"): Debian's gunicorn (sync workers, /usr/bin/python3) serving test/fixtures/retrograde/app.py,
 * whose every request, under an flock(2) on a shared state file, does work for every request in
 * flight. Its curve is the program's and the kernel's: nothing here states one. Started on a free
 * loopback port in its own process group, with its file in a fresh directory; `stop` ends the group
 * and removes the directory.
 */
export interface RetrogradeSettings {
  /** Sync workers: as many as the most users a probe sends, so that none waits for a worker. */
  readonly workers: number;
  /** Rounds of SHA-256 of each update under the lock (the app's RETRO_WORK). */
  readonly work: number;
  /**
   * Rounds more for each request in flight (RETRO_WORK_PER_REQUEST). 2 000: at 1 000 the peak was
   * flat within a half-second step's noise on a machine whose process switches cost more, and the
   * probe put the USL's peak within 15 % of the measured one in three or four runs of seven;
   * at 2 000 the fall past it is steeper (docs/probe.md, "A real one").
   */
  readonly workPerRequest: number;
  /** Milliseconds each request waits outside the lock (RETRO_SLEEP_MS). */
  readonly sleepMs: number;
}

export const RETROGRADE_SETTINGS: RetrogradeSettings = { workers: 32, work: 6_400, workPerRequest: 2_000, sleepMs: 20 };

const APP_DIR = resolve(import.meta.dirname, "../fixtures/retrograde");

export interface RetrogradeService {
  readonly url: string;
  /** gunicorn's version, as it printed it. */
  readonly version: string;
  readonly program: ChildProgram;
  stop(): Promise<void>;
}

/** Whether Debian's gunicorn is here (python3-gunicorn loads only in Debian's /usr/bin/python3). */
export function hasDebianGunicorn(): boolean {
  return existsSync("/usr/bin/python3") && existsSync("/usr/lib/python3/dist-packages/gunicorn");
}

/** `prefix`: a command the service runs under, e.g. harness/realtime.ts's REALTIME_PREFIX. */
export async function startRetrogradeService(
  settings: RetrogradeSettings = RETROGRADE_SETTINGS,
  prefix: readonly string[] = [],
): Promise<RetrogradeService> {
  const dir = mkdtempSync(join(tmpdir(), "thundering-herd-retrograde-"));
  const environment = {
    RETRO_STATE: join(dir, "state"),
    RETRO_WORK: String(settings.work),
    RETRO_WORK_PER_REQUEST: String(settings.workPerRequest),
    RETRO_SLEEP_MS: String(settings.sleepMs),
  };
  const args = ["-m", "gunicorn", "-w", String(settings.workers), "-k", "sync", "-b", "127.0.0.1:0"];
  for (const [name, value] of Object.entries(environment)) args.push("-e", `${name}=${value}`);
  const command = [...prefix, "/usr/bin/python3", ...args, "--chdir", APP_DIR, "app:application"];
  const program = new ChildProgram("gunicorn", command[0]!, command.slice(1));
  const stop = async () => {
    await program.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const listening = await program.waitForLine(/Listening at: http:\/\/127\.0\.0\.1:\d+/, { stream: "stderr", timeoutMs: 30_000 });
    const version = /gunicorn (\d\S*)/.exec(program.stderr.map((line) => line.text).join("\n"))?.[1] ?? "unknown";
    return { url: `http://127.0.0.1:${/:(\d+) \(/.exec(listening)![1]}/`, version, program, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The probe's flags for this service, the e2e test's and the results file's: steps short enough
 * for seconds, long enough for a mean, close enough to see the peak.
 */
export const RETROGRADE_PROBE_FLAGS: readonly string[] = [
  "-step-duration",
  "500ms",
  "-step-requests",
  "100",
  "-steps",
  "1,2,4,6,8,12,16,24,32",
];

/** The USL's peak, as the probe printed it where it picked the USL, beside the measured one; undefined where it did not. */
export function uslPickedFigures(
  stdout: readonly string[],
): { readonly fittedPeakConcurrency: number; readonly measuredPeakConcurrency: number; readonly off: number } | undefined {
  const line = stdout.find((candidate) => candidate.startsWith("USL picked: "));
  // The offset as printed, from the unrounded peaks (the peaks' three figures would round it).
  const match = /peak at ([\d.]+) users fitted, ([\d.]+) measured \(.*?\) \(([-+][\d.]+) %\); /.exec(line ?? "");
  if (match === null) return undefined;
  return { fittedPeakConcurrency: Number(match[1]), measuredPeakConcurrency: Number(match[2]), off: Number(match[3]) / 100 };
}
