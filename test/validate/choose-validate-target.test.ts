import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort, portIsFree } from "../helpers/ports.ts";
import { isGroupRunning, isRunning } from "../helpers/processes.ts";
import { hasDebianGunicorn } from "../helpers/retrograde-service.ts";
import { spawnCli } from "../helpers/spawn-cli.ts";
import { temporaryDir } from "../helpers/temporary-dirs.ts";

/*
 * Validation, not a correctness test: `choose -validate -target` on Debian's gunicorn as it comes
 * (4 sync workers of 50 ms; its listen backlog of 2048 fills with stale work), started by
 * -target-cmd. choose ranks no retries above fixed retry for the service's probed model, then runs
 * both on the service itself: after a 4 s stop of its process group, fixed retry collapses there and
 * no retries comes back, so choose's order holds (`npm run validate`; not part of `npm test`; the
 * zoo's runs of the same: docs/real-services.md).
 */

/** The model the probe writes for it (docs/real-services.json), and 200 users at 40 req/s, half its capacity. */
const SYSTEM = [
  ...["-model", "queue", "-threads", "4", "-service-time", "50ms"],
  ...["-clients", "200", "-lambda", "5", "-timeout", "1s", "-interval", "1s"],
];
/** A 4 s stop, as the demo's e2e on the same service (test/e2e/demo.test.ts), and 15 s to drain the stale work it leaves. */
const PHASES = ["-steady", "3s", "-outages", "4s", "-observe", "15s", "-everyday", "20s", "-max-outage", "60s", "-seeds", "2"];
const APP_DIR = resolve(import.meta.dirname, "../fixtures/sleeper");

describe("choose -validate -target", () => {
  it("runs its winner and fixed retry on a real service, and its order holds there", { timeout: 240_000 }, async () => {
    expect(hasDebianGunicorn(), "needs Debian's gunicorn: apt-get install python3-gunicorn").toBe(true);
    const port = await freePort();
    const command = `exec /usr/bin/python3 -m gunicorn -w 4 -b 127.0.0.1:${port} -e SLEEP_MS=50 --chdir ${APP_DIR} app:application`;
    const out = temporaryDir("thundering-herd-choose-target-");
    const run = spawnCli(
      "choose",
      [
        ...["--import", "./src/register-tsx.mjs", "src/bin/choose.ts", ...SYSTEM, ...PHASES],
        ...["-candidates", "no-retries", "-stability-seeds", "0", "-json", "-out", out],
        ...["-validate", "-target", `http://127.0.0.1:${port}/`, "-target-cmd", command],
      ],
      { command: process.execPath },
    );
    const code = await run.exited;
    const output = run.stderrLines.join("\n");
    expect(code, output).toBe(0);
    const result = JSON.parse(run.stdoutLines.join("\n")) as {
      ranking: { id: string }[];
      validation: { on: string; rows: { id: string; simulated: string; measured: string }[]; order: { holds: boolean; words: string } };
    };
    expect(result.ranking[0]!.id, output).toBe("no-retries");
    expect(result.validation.on).toBe(`your service at http://127.0.0.1:${port}/`);
    expect(
      result.validation.rows.map((row) => [row.id, row.simulated, row.measured]),
      output,
    ).toEqual([
      ["no-retries", "recovered", "recovered"],
      ["fixed", "collapsed", "collapsed"],
    ]);
    expect(result.validation.order).toMatchObject({ holds: true });
    expect(result.validation.order.words).toMatch(/^choose's order on your service: holds: the winner no-retries recovered/);
    // The service's whole process group and both clients are gone, its port free.
    const group = Number(/\(process group (\d+)\)/.exec(output)?.[1]);
    expect(isGroupRunning(group)).toBe(false);
    const clients = [...output.matchAll(/client pid (\d+)/g)].map((match) => Number(match[1]));
    expect(clients).toHaveLength(2);
    for (const pid of clients) expect(isRunning(pid)).toBe(false);
    expect(await portIsFree(port)).toBe(true);
  });
});
