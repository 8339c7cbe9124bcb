import { describe, expect, it } from "vitest";
import { isRunning } from "../helpers/processes.ts";
import { spawnCli } from "../helpers/spawn-cli.ts";
import { temporaryDir } from "../helpers/temporary-dirs.ts";

/*
 * Validation, not a correctness test: `choose -validate` runs its top candidate and fixed retry
 * with the real ./server and ./client (two crash experiments of 14 s, one after the other) and
 * compares their verdicts with the simulator's (`npm run validate`; not part of `npm test`). The
 * real experiment is the demo's own runner, tested with the real programs in
 * test/e2e/demo.test.ts; choose's flags and errors in test/e2e/choose-cli.test.ts and
 * test/unit/choose/.
 */

interface Validation {
  id: string;
  simulated: string;
  measured: string;
  agrees: boolean;
}

/**
 * The demo's scaled-down scenario (200 users at ~95 req/s, a 400 ms timeout) with a 4 s
 * outage: fixed retry collapses, by a margin (the simulator has it collapse after about 2 s
 * of outage); no retries recovers, by far (it collapses after about 10 s). Its clients are
 * back 2–3 s after the resume (simulated, seeds 1–6), so seven seconds of observation are
 * more than twice what clients that do not retry need; three seconds of steady load give
 * the baseline.
 */
const SCALED = [
  ...["-clients", "200", "-lambda", "2", "-timeout", "400ms", "-interval", "1s"],
  ...["-steady", "3s", "-outages", "4s", "-observe", "7s", "-everyday", "20s", "-max-outage", "60s", "-seeds", "2"],
];

describe("choose -validate", () => {
  it("agrees with the real programs on the verdicts of its top candidate and of fixed retry", { timeout: 180_000 }, async () => {
    const out = temporaryDir("thundering-herd-choose-");
    const run = spawnCli(
      "choose",
      [
        ...["--import", "./src/register-tsx.mjs", "src/bin/choose.ts", ...SCALED],
        ...["-candidates", "no-retries", "-client-only", "-stability-seeds", "0"],
        ...["-validate", "-validate-top", "1", "-json", "-out", out],
      ],
      { command: process.execPath },
    );
    expect(await run.exited, run.stderrLines.join("\n")).toBe(0);
    const result = JSON.parse(run.stdoutLines.join("\n")) as { ranking: { id: string }[]; validation: { rows: Validation[] } };
    expect(result.ranking[0]!.id).toBe("no-retries");
    const rows = new Map(result.validation.rows.map((row) => [row.id, row]));
    expect([...rows.keys()]).toEqual(["no-retries", "fixed"]);
    expect(rows.get("fixed")).toMatchObject({ simulated: "collapsed", measured: "collapsed", agrees: true });
    expect(rows.get("no-retries")).toMatchObject({ simulated: "recovered", measured: "recovered", agrees: true });
    expect(run.stderrLines.join("\n")).not.toContain("DISAGREEMENT");
    // Every program -validate started is gone.
    const pids = run.stderrLines.flatMap((line) => [...line.matchAll(/pid (\d+)/g)].map((match) => Number(match[1])));
    expect(pids).toHaveLength(4);
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
  });
});
