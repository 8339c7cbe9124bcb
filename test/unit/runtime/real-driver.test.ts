import { afterEach, describe, expect, it } from "vitest";
import { RealDriver } from "../../../src/runtime/real-driver.ts";
import { TargetService } from "../../../src/runtime/target-service.ts";
import { eventually } from "../../helpers/eventually.ts";
import { freePort } from "../../helpers/ports.ts";
import { groupStates } from "../../helpers/processes.ts";

/*
 * The real-clock driver's part of a crash experiment before and after the runs, on real
 * processes: a target started and measured at rest by `prepare`, its group stopped by `close`,
 * also when it could not be measured; nothing to prepare or stop for our own programs. Its runs
 * are the demo's and choose -validate's e2e tests (test/e2e/demo.test.ts, choose-cli.test.ts).
 */

// The driver's close is what is tested: each target's groups are killed besides, so that a close that fails leaves nothing running.
const targets: TargetService[] = [];
afterEach(() => {
  for (const target of targets.splice(0)) target.kill();
});

/** Longer than a stop's grace before SIGKILL, shorter than a unit test's limit: a close that fails says so. */
const GONE_WITHIN_MS = 10_000;

/** A shell that starts an HTTP server answering `status` as its child: a group of two. */
const serverCommand = (port: number, status: number) =>
  `${process.execPath} -e "require('http').createServer((q, s) => { s.statusCode = ${status}; s.end('x'); }).listen(${port}, '127.0.0.1')" & wait`;

/** How many living processes a group has (a zombie has ended). */
const groupSize = (group: number) => groupStates(group).length;

async function targetDriver(status: number) {
  const port = await freePort();
  const target = new TargetService(new URL(`http://127.0.0.1:${port}/`), { kind: "command", command: serverCommand(port, status) });
  const said: string[] = [];
  targets.push(target);
  const driver = new RealDriver(target, (line) => said.push(line), new AbortController().signal);
  return { target, driver, said };
}

describe("the real-clock driver", () => {
  it("starts a target and measures it at rest, says its baseline, plans the runs on it, and stops its group on close", async () => {
    const { target, driver, said } = await targetDriver(200);
    await driver.prepare(2_000);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /^target http:\/\/127\.0\.0\.1:\d+\/ \S.*: at rest p50 \S+, p99 \S+; back at baseline means answers within \S+$/,
    );
    expect(driver.prepared?.plan.service).toBe(target);
    expect(driver.prepared?.plan.watch.timeoutMs).toBe(2_000);
    const group = target.processGroup!;
    expect(groupSize(group)).toBeGreaterThanOrEqual(2);
    await driver.close();
    await eventually(() => groupSize(group) === 0, "the target's group gone", GONE_WITHIN_MS);
  });

  it("fails with one line where the target does not serve at rest, and close still stops the group it started", async () => {
    const { target, driver } = await targetDriver(500);
    await expect(driver.prepare(2_000)).rejects.toThrow(
      /^-target http:\/\/127\.0\.0\.1:\d+\/: a request at rest was not served \(error 500\): the experiment measures its baseline first$/,
    );
    const group = target.processGroup!;
    expect(groupSize(group)).toBeGreaterThanOrEqual(2);
    await driver.close();
    await eventually(() => groupSize(group) === 0, "the target's group gone", GONE_WITHIN_MS);
  });

  it("has no target to prepare, plan runs on or stop for our own programs", async () => {
    const said: string[] = [];
    const driver = new RealDriver(undefined, (line) => said.push(line), new AbortController().signal);
    await driver.prepare(2_000);
    expect(driver.prepared).toBeUndefined();
    await driver.close();
    expect(said).toEqual([]);
  });
});
