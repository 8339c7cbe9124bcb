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
 * A progress bar rewritten in place on a terminal; elsewhere, plain lines at each tenth of
 * the work (never more often, so a log stays short).
 */
export function progress(stream: OutputStream, label: string, total: number): Progress {
  const tty = stream.isTTY === true;
  let lastStep = -1;
  let shown = false;
  const started = Date.now();
  return {
    update(done) {
      if (tty) {
        const filled = total === 0 ? BAR_WIDTH : Math.round((done / total) * BAR_WIDTH);
        const elapsedS = (Date.now() - started) / 1000;
        const etaS = done > 0 ? (elapsedS / done) * (total - done) : undefined;
        const eta = etaS === undefined ? "" : `, ~${Math.ceil(etaS)} s left`;
        const line = `${label} [${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${done}/${total}${eta}`;
        stream.write(`\r\x1b[K${line.slice(0, (stream.columns ?? 120) - 1)}`);
        shown = true;
        return;
      }
      const step = total === 0 ? PLAIN_STEPS : Math.floor((done / total) * PLAIN_STEPS);
      if (step === lastStep) return;
      lastStep = step;
      stream.write(`${label}: ${done}/${total} (${Math.round((done / Math.max(1, total)) * 100)} %)\n`);
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
