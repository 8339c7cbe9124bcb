import { resolve } from "node:path";
import { ChildProgram } from "../../src/runtime/child-program.ts";

const APP_DIR = resolve(import.meta.dirname, "../fixtures/sleeper");

export interface SleeperService {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Debian's gunicorn (/usr/bin/python3; python3-gunicorn loads only there) serving
 * test/fixtures/sleeper/app.py on a free loopback port, in its own process group: `workers`
 * sync workers each holding a request `sleepMs`, with gunicorn's further `args` (e.g.
 * `--backlog 16`, `-k gthread --threads 8`). `stop` ends the group.
 */
export async function startSleeperService(workers: number, sleepMs: number, args: readonly string[] = []): Promise<SleeperService> {
  const program = new ChildProgram("gunicorn", "/usr/bin/python3", [
    "-m",
    "gunicorn",
    "-w",
    String(workers),
    "-b",
    "127.0.0.1:0",
    "-e",
    `SLEEP_MS=${sleepMs}`,
    ...args,
    "--chdir",
    APP_DIR,
    "app:application",
  ]);
  try {
    const listening = await program.waitForLine(/Listening at: http:\/\/127\.0\.0\.1:\d+/, { stream: "stderr", timeoutMs: 30_000 });
    return { url: `http://127.0.0.1:${/:(\d+) \(/.exec(listening)![1]}/`, stop: async () => void (await program.stop()) };
  } catch (error) {
    await program.stop();
    throw error;
  }
}
