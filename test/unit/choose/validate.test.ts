import { createServer, type AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { main } from "../../../src/choose/main.ts";
import { parseChooseArgs } from "../../../src/options/choose.ts";
import type { ValidationRow } from "../../../src/recommend/report.ts";
import type { CandidateSummary } from "../../../src/recommend/summary.ts";
import { orderOnService, validateTop } from "../../../src/choose/validate.ts";
import type { Verdict } from "../../../src/model/verdict.ts";
import { afterThisTest } from "../../helpers/after-this-test.ts";
import { capturedIo } from "../../helpers/captured-io.ts";
import { freePort } from "../../helpers/ports.ts";

/*
 * choose -validate on a service of the user's (-target): its flags, checked before anything is
 * measured or started, and the rule that says whether choose's order held there (the real runs:
 * scripts/real-services.ts, docs/real-services.md).
 */

function row(id: string, measured: Verdict, clientsBackS: number | null): ValidationRow {
  return {
    id,
    outageMs: 20_000,
    simulated: measured,
    simulatedSeeds: [measured],
    measured,
    agrees: true,
    simulatedServerRecoveryMs: null,
    measuredServerRecoveryMs: null,
    simulatedClientRecoveryMs: null,
    measuredClientRecoveryMs: clientsBackS === null ? null : clientsBackS * 1000,
    simulatedPeakConcurrency: 0,
    measuredPeakConcurrency: null,
  };
}

describe("choose's order on the service", () => {
  it("holds when the winner's verdict is better, and not when it is worse", () => {
    expect(orderOnService(row("w", "recovered", 8), row("fixed", "collapsed", null))).toEqual({
      holds: true,
      words: "choose's order on your service: holds: the winner w recovered (clients back 8s), fixed collapsed",
    });
    expect(orderOnService(row("w", "collapsed", null), row("fixed", "recovering", null)).holds).toBe(false);
    expect(orderOnService(row("w", "recovering", null), row("fixed", "collapsed", null)).holds).toBe(true);
  });

  it("on the same verdict, goes by when the clients were back: within 10 s or a factor 1.5 is a tie", () => {
    const tie = orderOnService(row("w", "recovered", 19), row("fixed", "recovered", 10));
    expect(tie).toEqual({
      holds: true,
      words:
        "choose's order on your service: holds, as a tie on this outage: the winner w recovered (clients back 19s), fixed recovered (clients back 10s)",
    });
    expect(orderOnService(row("w", "recovered", 40), row("fixed", "recovered", 28)).words).toContain("as a tie");
    expect(orderOnService(row("w", "recovered", 10), row("fixed", "recovered", 41)).words).toMatch(/: holds: /);
    const worse = orderOnService(row("w", "recovered", 41), row("fixed", "recovered", 10));
    expect(worse.holds).toBe(false);
    expect(worse.words).toContain("DOES NOT HOLD");
  });

  it("cannot tell when a run was not judged, a candidate could not run, or both collapsed", () => {
    expect(orderOnService(row("w", "collapsed", null), row("fixed", "collapsed", null))).toEqual({
      holds: undefined,
      words: "choose's order on your service: cannot tell: both collapsed at this outage: the winner w collapsed, fixed collapsed",
    });
    expect(orderOnService(row("w", "invalid", null), row("fixed", "collapsed", null)).holds).toBeUndefined();
    expect(orderOnService(row("w", "recovered", 3), row("fixed", "too-short", null)).holds).toBeUndefined();
    expect(orderOnService(undefined, row("fixed", "collapsed", null)).words).toBe(
      "choose's order on your service: cannot tell: a candidate could not run on it",
    );
  });
});

describe("choose -validate -target's flags", () => {
  const parse = (args: readonly string[]) => () => parseChooseArgs(args);
  const TARGET = ["-target", "http://127.0.0.1:1/"];

  it("refuses a target without -validate, one it cannot stop, one off this machine, two ways to act on it, and ./server's levers", () => {
    expect(parse([...TARGET, "-validate", "-target-cmd", "x", "-server-side"])).toThrow(
      "-server-side ranks ./server's levers, which your service does not have: -target ranks client policies only",
    );
    expect(parse([...TARGET, "-target-pid", "5"])).toThrow("-target runs -validate's experiment on your service: it needs -validate");
    expect(parse([...TARGET, "-validate"])).toThrow(
      "-validate stops your service (SIGSTOP, SIGCONT): -target needs -target-cmd or -target-pid",
    );
    expect(parse(["-target", "http://192.0.2.1/", "-validate", "-target-cmd", "x"])).toThrow("only on this machine's loopback");
    expect(parse([...TARGET, "-validate", "-target-cmd", "x", "-target-pid", "5"])).toThrow("-target-cmd or -target-pid");
    expect(parse(["-validate", "-target-cmd", "x"])).toThrow("-target-cmd and -target-pid go with -target URL");
  });

  it("takes a target it can start or stop, not started yet", () => {
    const parsed = parseChooseArgs([...TARGET, "-validate", "-target-cmd", "exec my-service"]);
    if (parsed.kind !== "run") throw new Error("help");
    expect(parsed.options.target?.control).toEqual({ kind: "command", command: "exec my-service" });
    expect(parsed.options.target?.program).toBeUndefined();
  });

  it("refuses a service it cannot play before measuring anything: a pid that is no process, a port another program holds", async () => {
    const first = capturedIo();
    await expect(main(["-validate", ...TARGET, "-target-pid", "999999999"], first.io)).rejects.toThrow(
      "-target-pid 999999999: no such process",
    );
    expect(first.stderr()).toBe("");
    const holder = createServer();
    await new Promise<void>((listening) => holder.listen(0, "127.0.0.1", listening));
    afterThisTest(() => new Promise<void>((closed) => holder.close(() => closed())));
    const port = (holder.address() as AddressInfo).port;
    const second = capturedIo();
    await expect(main(["-validate", "-target", `http://127.0.0.1:${port}/`, "-target-cmd", "exec sleep 60"], second.io)).rejects.toThrow(
      `127.0.0.1:${port} accepts connections already`,
    );
    expect(second.stderr()).toBe("");
  });

  it("refuses a -validate-against that is no candidate before measuring anything", async () => {
    const { io, stderr } = capturedIo();
    await expect(main(["-validate", "-validate-against", "fixed-typo"], io)).rejects.toThrow(
      'invalid value "fixed-typo" for flag -validate-against: not among the candidates measured (-list shows them)',
    );
    expect(stderr()).toBe("");
  });

  it("a service that cannot be played ends the validation, not choose: the failure is kept beside the ranking", async () => {
    const port = await freePort();
    const parsed = parseChooseArgs(["-validate", "-target", `http://127.0.0.1:${port}/`, "-target-cmd", "echo gone; exit 3"]);
    if (parsed.kind !== "run") throw new Error("help");
    const fixed = { candidate: { id: "fixed", client: {}, server: {} } } as unknown as CandidateSummary;
    const { io, stderr } = capturedIo();
    const noLaunch = () => {
      throw new Error("-validate started a client for a service it could not start");
    };
    const validation = await validateTop(parsed.options, [fixed], [fixed], new Map(), io, noLaunch);
    expect(validation).toMatchObject({ on: `your service at http://127.0.0.1:${port}/`, rows: [], order: undefined });
    expect(validation !== "interrupted" && validation.failure).toMatch(
      /^the target command ended \(3\) before 127\.0\.0\.1:\d+ accepted a connection/,
    );
    expect(stderr()).toMatch(/^choose: -validate failed: the target command ended \(3\)/);
  });
});
