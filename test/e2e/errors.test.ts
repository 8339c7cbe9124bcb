import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runTogether } from "../helpers/run-together.ts";
import { spawnCli, type SpawnedCli } from "../helpers/spawn-cli.ts";

/*
 * Failures that are not usage mistakes. Expected ones (a results directory that cannot be
 * made) are one line naming the path and the reason, exit 1, never a stack. Unexpected ones
 * are one line saying what failed and that -debug shows the stack, exit 1; with -debug or
 * THUNDERING_HERD_DEBUG=1 the stack follows. The unexpected error here is real: standard
 * output on /dev/full, where every write fails with ENOSPC, as on a full disk.
 */

const SHORT_SIM = ["-duration", "30s", "-clients", "100", "-quiet"];
/** The server's start-up line that states its model's capacity and tipping point. */
const MODEL_LINE = /^server: model exponential \(.*\): capacity [\d.]+ req\/s/;
const STACK_LINE = /^\s+at /;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A path whose parent is a regular file: no directory can be made there, even by root. */
function impossibleDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "thundering-herd-errors-"));
  dirs.push(dir);
  writeFileSync(join(dir, "file"), "");
  return join(dir, "file", "results");
}

const demo = (args: readonly string[]) =>
  spawnCli("demo", ["--import", "./src/register-tsx.mjs", "src/bin/demo.ts", ...args], { command: process.execPath });

const nonEmpty = (lines: string[]) => lines.filter((line) => line !== "");

/** A program's end: its exit code and output. */
async function finished(run: SpawnedCli) {
  const code = await run.exited;
  return { code, stdoutLines: run.stdoutLines, stderrLines: run.stderrLines };
}

// Each case is one short process (a start-up and a failure): all of them at once, each test judging its own.
const sweepOut = impossibleDir();
const demoOut = impossibleDir();
const runs = runTogether({
  fullOutput: () => finished(spawnCli("sim", SHORT_SIM, { shell: "exec >/dev/full" })),
  fullOutputDebug: () => finished(spawnCli("sim", [...SHORT_SIM, "-debug"], { shell: "exec >/dev/full" })),
  serverDebugVariable: () =>
    finished(
      spawnCli("server", ["-listen", "127.0.0.1:0", "-report-interval", "50ms"], {
        shell: "export THUNDERING_HERD_DEBUG=1; exec >/dev/full",
      }),
    ),
  serverFullOutput: () =>
    finished(spawnCli("server", ["-listen", "127.0.0.1:0", "-report-interval", "50ms"], { shell: "exec >/dev/full" })),
  readerGone: () => finished(spawnCli("bash", ["-c", "set -o pipefail; ./sim -duration 1h -clients 1000 | head -1"], { command: "bash" })),
  demoOut: () => finished(demo(["-out", demoOut, "-debug"])),
  sweepOut: () => finished(spawnCli("sim", ["-sweep", "clients=100,200", "-duration", "30s", "-out", sweepOut])),
});

describe("unexpected errors", () => {
  it("output that cannot be written: one line and exit 1, not a silent success", () => {
    const run = runs("fullOutput");
    expect(run.code).toBe(1);
    const lines = nonEmpty(run.stderrLines);
    expect(lines.at(-1)).toBe("sim: writing standard output: ENOSPC: no space left on device, write (run with -debug for the stack)");
    expect(lines.filter((line) => STACK_LINE.test(line))).toEqual([]);
  });

  it("with -debug, the stack follows the line", () => {
    const run = runs("fullOutputDebug");
    expect(run.code).toBe(1);
    const lines = nonEmpty(run.stderrLines);
    const at = lines.indexOf("sim: writing standard output: ENOSPC: no space left on device, write");
    expect(at).toBeGreaterThanOrEqual(0);
    expect(lines[at + 1]).toBe("Error: ENOSPC: no space left on device, write");
    expect(lines.slice(at + 2).length).toBeGreaterThan(0);
    expect(lines.slice(at + 2).every((line) => STACK_LINE.test(line))).toBe(true);
  });

  it("with THUNDERING_HERD_DEBUG=1, the stack follows the line", () => {
    const run = runs("serverDebugVariable");
    expect(run.code).toBe(1);
    const lines = nonEmpty(run.stderrLines);
    expect(lines[0]).toMatch(/^server: listening on /);
    expect(lines[1]).toMatch(MODEL_LINE);
    expect(lines[2]).toBe("server: writing standard output: ENOSPC: no space left on device, write");
    expect(lines[3]).toBe("Error: ENOSPC: no space left on device, write");
    expect(lines.slice(4).length).toBeGreaterThan(0);
    expect(lines.slice(4).every((line) => STACK_LINE.test(line))).toBe(true);
  });

  it("a running server whose output fails stops with one line, exit 1", () => {
    const run = runs("serverFullOutput");
    expect(run.code).toBe(1);
    expect(nonEmpty(run.stderrLines)).toEqual([
      expect.stringMatching(/^server: listening on /),
      expect.stringMatching(MODEL_LINE),
      "server: writing standard output: ENOSPC: no space left on device, write (run with -debug for the stack)",
    ]);
  });

  it("a reader that goes away (| head) ends the program quietly, as SIGPIPE ends a Go program", () => {
    const run = runs("readerGone");
    expect(run.code).toBe(141);
    expect(run.stdoutLines[0]).toMatch(/concurrency/);
    expect(run.stderrLines.filter((line) => /writing standard output|uncaught|unhandled|EPIPE/.test(line))).toEqual([]);
  });
});

describe("expected errors", () => {
  it("demo: a results directory that cannot be made fails at once, in one line, before starting anything", () => {
    const run = runs("demoOut");
    expect(run.code).toBe(1);
    const lines = nonEmpty(run.stderrLines);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^demo: cannot create directory ${demoOut}/[\\dT-]+Z: not a directory$`));
  });

  it("sim: a sweep's -out directory that cannot be made fails before the sweep, in one line", () => {
    const run = runs("sweepOut");
    expect(run.code).toBe(1);
    expect(nonEmpty(run.stdoutLines)).toEqual([]); // no sweep ran
    expect(nonEmpty(run.stderrLines).at(-1)).toBe(`sim: cannot create directory ${sweepOut}: not a directory`);
    expect(run.stderrLines.filter((line) => STACK_LINE.test(line))).toEqual([]);
  });
});
