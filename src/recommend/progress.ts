import type { OutputStream } from "../runtime/program-io.ts";
import type { WorkerPool } from "../runtime/worker-pool.ts";

/** Lines printed on a stream that is not a terminal: one per tenth of the work. */
const PLAIN_STEPS = 10;
const BAR_WIDTH = 30;

export interface Progress {
  update(done: number): void;
  /** Clears the bar (on a terminal) or prints the last line. */
  finish(): void;
}

/**
 * How long is left at the pace so far, for a line that says it: nothing before the first job is
 * done (no pace yet) or once all are.
 */
function timeLeftText(elapsedMs: number, done: number, total: number): string {
  if (done <= 0 || done >= total) return "";
  return `, about ${Math.ceil(((elapsedMs / done) * (total - done)) / 1000)} s left`;
}

/**
 * A progress bar rewritten in place on a terminal; elsewhere, plain lines at each tenth of
 * the work (never more often, so a log stays short). Both say how long is left at the pace so far.
 */
export function progress(stream: OutputStream, label: string, total: number, now: () => number = Date.now): Progress {
  const tty = stream.isTTY === true;
  let lastStep = -1;
  let shown = false;
  const started = now();
  return {
    update(done) {
      const left = timeLeftText(now() - started, done, total);
      if (tty) {
        const filled = total === 0 ? BAR_WIDTH : Math.round((done / total) * BAR_WIDTH);
        const line = `${label} [${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${done}/${total}${left}`;
        stream.write(`\r\x1b[K${line.slice(0, (stream.columns ?? 120) - 1)}`);
        shown = true;
        return;
      }
      const step = total === 0 ? PLAIN_STEPS : Math.floor((done / total) * PLAIN_STEPS);
      if (step === lastStep) return;
      lastStep = step;
      stream.write(`${label}: ${done}/${total} (${Math.round((done / Math.max(1, total)) * 100)} %)${left}\n`);
    },
    finish() {
      if (tty && shown) stream.write("\r\x1b[K");
      shown = false;
    },
  };
}

/** Runs every job as one `task` on the pool, the bar counting them done; the results in the jobs' order. */
export async function runWithProgress<Output>(
  pool: WorkerPool,
  task: string,
  jobs: readonly unknown[],
  stream: OutputStream,
  label: string,
): Promise<Output[]> {
  const bar = progress(stream, label, jobs.length);
  let done = 0;
  bar.update(0);
  try {
    return await Promise.all(
      jobs.map(async (job) => {
        const result = await pool.run<Output>(task, job);
        bar.update(++done);
        return result;
      }),
    );
  } finally {
    bar.finish();
  }
}
