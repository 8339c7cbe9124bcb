import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, spawnCli } from "../helpers/spawn-cli.ts";

/*
 * probe -from agrees with probe: Debian's gunicorn (4 sync workers, 50 ms a request: a server
 * nobody here wrote) probed live, then its load tests fitted without loading it again: the live
 * probe's own output kept in a file, and autocannon's (a dev dependency) runs at the same four
 * concurrencies. Each fit must pick the live probe's family, its capacity within 10 % of the
 * live probe's. A file of its own: the tools' runs would disturb the other probes' timings.
 */

const AUTOCANNON = resolve(REPO_ROOT, "node_modules/.bin/autocannon");
const CAPACITY = /^picked (\w+): .*capacity ([\d.]+) req\/s/m;

async function finished(run: ReturnType<typeof spawnCli>) {
  const code = await run.exited;
  return { code, stdout: run.stdoutLines.join("\n"), stderr: run.stderrLines.join("\n") };
}

/** The picked family and the model's capacity of a probe's output. */
function picked(stdout: string): { family: string; capacityPerSec: number } {
  const match = CAPACITY.exec(stdout);
  return { family: match?.[1] ?? `(none) ${stdout}`, capacityPerSec: Number(match?.[2]) };
}

describe("probe -from: the load tests a user already made, against a live probe of the same server", () => {
  // The files serve every test here: removed after the last (a temporaryDir goes after the first).
  const dir = mkdtempSync(join(tmpdir(), "thundering-herd-probe-from-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const autocannonFiles: string[] = [];
  let live = { code: 0 as number | string, stdout: "", stderr: "" };
  const probeOutput = join(dir, "probe.txt");
  let gunicorn: ReturnType<typeof spawnCli> | undefined;
  // Stopped by its own process group here too: a failing beforeAll runs no afterEach.
  afterAll(() => gunicorn?.program.kill());

  beforeAll(async () => {
    expect(
      existsSync("/usr/bin/python3") && existsSync("/usr/lib/python3/dist-packages/gunicorn"),
      "needs Debian's gunicorn: apt-get install gunicorn",
    ).toBe(true);
    writeFileSync(
      join(dir, "app.py"),
      'import time\n\ndef application(environ, start_response):\n    time.sleep(0.05)\n    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])\n    return [b"OK"]\n',
    );
    const started = spawnCli(
      "gunicorn",
      ["-m", "gunicorn", "-w", "4", "-k", "sync", "-b", "127.0.0.1:0", "--chdir", dir, "app:application"],
      {
        command: "/usr/bin/python3",
        cwd: REPO_ROOT,
      },
    );
    const listening = /Listening at: (http:\/\/127\.0\.0\.1:\d+)/;
    gunicorn = started;
    const url = `${listening.exec(await started.waitForLine(listening, { stream: "stderr", timeoutMs: 30_000 }))![1]!}/`;
    // Steps of 100 answers, as the probe's own test of gunicorn: a loaded machine's hiccups average out.
    live = await finished(spawnCli("probe", ["-step-duration", "1s", "-step-requests", "100", url]));
    writeFileSync(probeOutput, live.stdout);
    for (const users of ["1", "2", "4", "8"]) {
      const run = await finished(spawnCli("autocannon", ["-c", users, "-d", "1", "--json", url], { command: AUTOCANNON }));
      expect(run.code, run.stderr).toBe(0);
      autocannonFiles.push(join(dir, `autocannon-${users}.json`));
      writeFileSync(autocannonFiles.at(-1)!, run.stdout);
    }
  }, 90_000);

  it.each([
    ["autocannon's --json runs", () => autocannonFiles, "autocannon --json"],
    ["the live probe's own output, kept in a file", () => [probeOutput], "thundering-herd probe's output"],
  ])("fits %s to the live probe's family, its capacity within 10 %%, sending nothing", async (_, files, format) => {
    expect(live.code, live.stderr).toBe(0);
    const run = await finished(spawnCli("probe", ["-from", files().join(",")]));
    const output = `${live.stdout}\n---\n${run.stderr}\n${run.stdout}`;
    expect(run.code, output).toBe(0);
    expect(run.stderr, output).toContain(`: ${format}, `);
    const [fromFiles, liveFit] = [picked(run.stdout), picked(live.stdout)];
    expect(fromFiles.family, output).toBe(liveFit.family);
    expect(Math.abs(fromFiles.capacityPerSec / liveFit.capacityPerSec - 1), output).toBeLessThan(0.1);
  });

  it("refuses a file that is no load test in one line, naming it and the formats (exit 2)", async () => {
    const notes = join(dir, "notes.txt");
    writeFileSync(notes, "retry settings: 3 attempts\n");
    const run = await finished(spawnCli("probe", ["-from", notes]));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^\S+notes\.txt: not a load test the probe reads \(autocannon --json; /);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
