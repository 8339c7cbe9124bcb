import { describe, expect, it } from "vitest";
import { ProbeBudget } from "../../../src/probe/budget.ts";
import { probeInProcess } from "../../helpers/probe-in-process.ts";
import { runTogether } from "../../helpers/run-together.ts";
import { eventually } from "../../helpers/eventually.ts";
import { startScriptedServer } from "../../helpers/scripted-server.ts";

/*
 * The probe's hard limits against a counting server (a loopback server that notes each request's
 * arrival): -max-requests in all, -max-rate over any one-second window of arrivals, and
 * -max-time, shown by counts, never by elapsed time: the probe names the limit that ended it,
 * nothing arrives once its main has returned, and the arrivals are at most the rate times the
 * seconds begun. Many more users than the rate allows make every user wait for the rate, the
 * case where reserved slots and bunched timers broke the limits (issue 39: -steps 5000
 * -max-rate 1000 -max-time 2s ran 8.2 s and sent up to 1 296 in a second; at the sizes here the
 * old code let 2 301 requests through, 231 in one second).
 */

const MAX_RATE = 200;
const MAX_TIME_MS = 1_500;
const MAX_REQUESTS = 100;
/**
 * The window check compares arrival instants noted by a server on the probe's own event loop: a
 * stall of that loop longer than the probe's 50 ms margin (RATE_WINDOW_MARGIN_MS) delays arrivals
 * it then notes together, so a window may hold a few sent in the second before. 10 % allows
 * such a stall; the unbounded old code's 231 still fails it.
 */
const WINDOW_SLACK = 1.1;

/** The most arrivals in any one-second window [t, t + 1 s) that starts at an arrival. */
function mostInOneSecond(arrivals: readonly number[]): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  let end = 0;
  for (let start = 0; start < sorted.length; start++) {
    while (end < sorted.length && sorted[end]! < sorted[start]! + 1000) end++;
    most = Math.max(most, end - start);
  }
  return most;
}

/**
 * The probe's run against a counting server: its end, its arrivals, and how many of them came
 * after its main returned (counted once the probe's connections have all closed, by which
 * point every request it wrote has arrived).
 */
async function countedProbe(args: readonly string[]) {
  const server = await startScriptedServer((_request, response) => response.end("OK"));
  const end = await probeInProcess([...args, server.url]);
  const arrivedByReturn = server.arrivals.length;
  await eventually(() => server.openConnections() === 0, "the probe's connections to close");
  return { end, arrivals: [...server.arrivals], arrivedAfterReturn: server.arrivals.length - arrivedByReturn };
}

describe("the probe's hard limits, against a counting server", () => {
  const runs = runTogether(
    {
      // 2 000 users for 200 req/s: the rate and the wall clock end the probe, not its requests.
      timeAndRate: () =>
        countedProbe([
          "-steps",
          "2000",
          "-step-duration",
          "10s",
          "-max-rate",
          String(MAX_RATE),
          "-max-time",
          `${MAX_TIME_MS}ms`,
          "-timeout",
          "1s",
        ]),
      requests: () => countedProbe(["-steps", "500", "-step-duration", "10s", "-max-requests", String(MAX_REQUESTS), "-max-time", "20s"]),
    },
    { timeoutMs: 60_000 },
  );

  it("-max-time: the probe says the limit ended it, leaves nothing in flight, and sent no more than the rate allows in the time", () => {
    const { end, arrivals, arrivedAfterReturn } = runs("timeAndRate");
    expect(end.exitCode, end.stderrLines.join("\n")).toBe(1);
    expect(end.stderrLines.join("\n")).toMatch(/the -max-time limit of 1\.5s was reached before the service saturated/);
    expect(arrivals.length).toBeGreaterThan(0);
    expect(arrivedAfterReturn).toBe(0);
    expect(arrivals.length).toBeLessThanOrEqual(MAX_RATE * Math.ceil(MAX_TIME_MS / 1000));
  });

  it("-max-rate: no one-second window of arrivals holds more than the rate (and the slack of a stalled loop)", () => {
    const { arrivals } = runs("timeAndRate");
    expect(mostInOneSecond(arrivals)).toBeLessThanOrEqual(Math.floor(MAX_RATE * WINDOW_SLACK));
  });

  // A pin, not a fix: the old code held -max-requests too; this keeps it held.
  it("-max-requests: the server saw no more requests than the limit, and the probe says the limit ended it", () => {
    const { end, arrivals } = runs("requests");
    expect(end.exitCode, end.stderrLines.join("\n")).toBe(1);
    expect(end.stderrLines.join("\n")).toMatch(
      /the -max-requests limit of 100 was reached before the service saturated \(100 requests sent\)/,
    );
    expect(arrivals.length).toBeLessThanOrEqual(MAX_REQUESTS);
  });
});

describe("the probe's budget, held at its rate", () => {
  it("keeps its queue of waiting users within twice the users, however many requests they send", async () => {
    // 50 users for 1 000 requests at 2 000/s: every user waits for the rate, and the queue never
    // drains until the requests are spent (before, it kept one served user for every send).
    const users = 50;
    const requests = 1_000;
    const budget = new ProbeBudget(requests, 2_000, 60_000, new AbortController().signal);
    let mostHeld = 0;
    const user = async () => {
      while (await budget.take()) mostHeld = Math.max(mostHeld, budget.heldWaiting);
    };
    await Promise.all(Array.from({ length: users }, user));
    budget.dispose();
    expect(budget.sent).toBe(requests);
    expect(budget.rateBound).toBe(true);
    expect(mostHeld).toBeLessThan(2 * users);
  });
});

describe("the limits' own bounds", () => {
  it.each([
    ["-max-rate", "100001", "must be <= 100000"],
    ["-max-requests", "10000001", "must be <= 10000000"],
  ])("%s %s is refused with exit 2 (the budget's memory grows with it)", async (flag, value, rule) => {
    const end = await probeInProcess([flag, value, "http://127.0.0.1:1/api"]);
    expect(end.exitCode).toBe(2);
    expect(end.stderrLines).toEqual([`probe: invalid value "${value}" for flag ${flag}: ${rule}`, "Run 'probe -h' for usage."]);
  });
});
