import { describe, expect, it } from "vitest";
import { probeInProcess } from "../../helpers/probe-in-process.ts";
import { runTogether } from "../../helpers/run-together.ts";
import { startScriptedServer } from "../../helpers/scripted-server.ts";

/*
 * The probe's hard limits against a counting server (a loopback server that notes each request's
 * arrival instant on this process's clock, which the probe shares): -max-requests in all,
 * -max-rate over any one-second window of arrivals, and nothing arriving after -max-time from
 * the probe's start. These compare instants the probe promised to respect; nothing here measures
 * speed. Many more users than the rate allows make every user wait for the rate, the case where
 * reserved slots and bunched timers broke the limits (issue 39: -steps 5000 -max-rate 1000
 * -max-time 2s ran 8.2 s and sent up to 1 296 in a second).
 */

const MAX_RATE = 200;
const MAX_TIME_MS = 1_500;
const MAX_REQUESTS = 100;
/**
 * An arrival may be noted this long after the probe let its request go: the request crosses
 * loopback and waits for this process's event loop, which also runs the probe. The old code
 * overran its deadline by seconds.
 */
const DELIVERY_SLACK_MS = 250;

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

async function countedProbe(args: readonly string[]) {
  const server = await startScriptedServer((_request, response) => response.end("OK"));
  const startedAt = performance.now();
  const end = await probeInProcess([...args, server.url]);
  return { end, startedAt, arrivals: [...server.arrivals] };
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

  it("-max-time: nothing arrives after the deadline, and the probe says the limit ended it", () => {
    const { end, startedAt, arrivals } = runs("timeAndRate");
    expect(end.exitCode, end.stderrLines.join("\n")).toBe(1);
    expect(end.stderrLines.join("\n")).toMatch(/the -max-time limit of 1\.5s was reached before the service saturated/);
    expect(arrivals.length).toBeGreaterThan(0);
    const lastAfterStart = Math.max(...arrivals) - startedAt;
    expect(lastAfterStart).toBeLessThanOrEqual(MAX_TIME_MS + DELIVERY_SLACK_MS);
  });

  it("-max-rate: no one-second window of arrivals holds more than the rate", () => {
    const { arrivals } = runs("timeAndRate");
    expect(mostInOneSecond(arrivals)).toBeLessThanOrEqual(MAX_RATE);
  });

  it("-max-requests: the server saw no more requests than the limit, and the probe says the limit ended it", () => {
    const { end, arrivals } = runs("requests");
    expect(end.exitCode, end.stderrLines.join("\n")).toBe(1);
    expect(end.stderrLines.join("\n")).toMatch(
      /the -max-requests limit of 100 was reached before the service saturated \(100 requests sent\)/,
    );
    expect(arrivals.length).toBeLessThanOrEqual(MAX_REQUESTS);
  });
});
