import { afterAll, describe, expect, it } from "vitest";
import { eventually } from "../../helpers/eventually.ts";
import {
  bytesAReaderStoppedAtTheCapLetsThrough,
  type HostileKind,
  type HostileService,
  HOSTILE_KINDS,
  startHostileService,
} from "../../helpers/hostile-service.ts";
import { type ProbeEnd, probeInProcess } from "../../helpers/probe-in-process.ts";
import { runTogether } from "../../helpers/run-together.ts";

/*
 * The probe against services that answer badly (test/helpers/hostile-service.ts), in process:
 * each ends with one line that names what is wrong, exit 1, never a measured step ("errors 0
 * (0.0 %)", a healthy verdict), and leaves no connection open. Bounded time and memory are
 * shown by what the services counted, not by a clock.
 */

const MAX_BODY = 64 * 1024;
const TIMEOUT_MS = 300;
/** A hang bound only: the probe's own wall clock, ten times its -timeout. */
const MAX_TIME_MS = 3_000;
const ARGS = ["-steps", "1,2", "-step-duration", "200ms", "-timeout", `${TIMEOUT_MS}ms`, "-max-time", `${MAX_TIME_MS}ms`];
const ARGS_WITH_CAP = [...ARGS, "-max-body", String(MAX_BODY)];

/** The one line each service must end the probe with. */
const VERDICTS: Readonly<Record<HostileKind, RegExp>> = {
  "broken-chunks": /^probe: http:\/\/127\.0\.0\.1:\d+\/api did not answer as an HTTP service \(invalid-http\)$/,
  "endless-body":
    /^probe: every answer from http:\/\/127\.0\.0\.1:\d+\/api had a body longer than -max-body \(65536 bytes\): nothing to measure/,
  "huge-content-length": /^probe: every answer from http:\/\/127\.0\.0\.1:\d+\/api had a body longer than -max-body \(65536 bytes\)/,
  trickle: /^probe: http:\/\/127\.0\.0\.1:\d+\/api answered no request in full within the -timeout of 300ms$/,
  reset: /^probe: http:\/\/127\.0\.0\.1:\d+\/api did not answer as an HTTP service \(reset\)$/,
  garbage: /^probe: http:\/\/127\.0\.0\.1:\d+\/api did not answer as an HTTP service \(invalid-http\)$/,
  hang: /^probe: http:\/\/127\.0\.0\.1:\d+\/api answered no request in full within the -timeout of 300ms$/,
  "redirect-loop": /^probe: every answer from http:\/\/127\.0\.0\.1:\d+\/api was an error \(HTTP 302\): nothing to measure$/,
};

/** The most a trickle (a 6-byte chunk each 10 ms at most, after a head) can write in `ms`. */
const trickleBytesWithin = (ms: number) => 200 + 6 * (ms / 10);

/** -max-time below a -timeout that a trickle never reaches: the deadline must end the exchange in flight. */
const DEADLINE_FIRST_MS = 1_000;
const DEADLINE_FIRST_ARGS = ["-steps", "1,2", "-step-duration", "200ms", "-timeout", "60s", "-max-time", `${DEADLINE_FIRST_MS}ms`];

const services: HostileService[] = [];
afterAll(async () => {
  await Promise.all(services.map((service) => service.close()));
});

async function probeHostile(kind: HostileKind, args = ARGS_WITH_CAP): Promise<{ end: ProbeEnd; service: HostileService }> {
  const service = await startHostileService(kind);
  services.push(service);
  const end = await probeInProcess([...args, service.url]);
  await eventually(() => service.openConnections() === 0, `the probe closing its connections to the ${kind} service`);
  return { end, service };
}

describe("the probe against a hostile service", () => {
  const runs = runTogether(
    {
      ...(Object.fromEntries(HOSTILE_KINDS.map((kind) => [kind, () => probeHostile(kind)])) as Record<
        HostileKind,
        () => ReturnType<typeof probeHostile>
      >),
      trickleThroughTheDeadline: () => probeHostile("trickle", DEADLINE_FIRST_ARGS),
    },
    { timeoutMs: 60_000 },
  );

  it.each(HOSTILE_KINDS)("%s: one line naming the fault, exit 1, no step measured, no connection left open", (kind) => {
    const { end } = runs(kind);
    const output = [...end.stdoutLines, ...end.stderrLines].join("\n");
    expect(end.exitCode, output).toBe(1);
    expect(end.stdoutLines, output).toEqual([]);
    const problems = end.stderrLines.filter((line) => !/^probe: http\S+: closed-loop steps/.test(line));
    expect(problems, output).toHaveLength(1);
    expect(problems[0], output).toMatch(VERDICTS[kind]);
    expect(output).not.toMatch(/errors 0 \(0\.0 %\)/);
    expect(output).toMatch(/^[\x20-\x7e\n]*$/);
  });

  it("endless body: the probe stopped reading each answer at -max-body (the bytes the service got to write are bounded)", () => {
    const { service } = runs("endless-body");
    expect(service.bytesPerClosedConnection.length).toBeGreaterThan(0);
    expect(Math.max(...service.bytesPerClosedConnection)).toBeLessThanOrEqual(bytesAReaderStoppedAtTheCapLetsThrough(MAX_BODY));
  });

  it("trickle: each exchange ended within its -timeout, however often a byte came (the bytes written are bounded)", () => {
    const { service } = runs("trickle");
    expect(service.bytesPerClosedConnection.length).toBeGreaterThan(0);
    expect(Math.max(...service.bytesPerClosedConnection)).toBeLessThanOrEqual(trickleBytesWithin(MAX_TIME_MS));
  });

  it("trickle under a -timeout longer than -max-time: the deadline ends the exchange in flight, and the probe says so", () => {
    const { end, service } = runs("trickleThroughTheDeadline");
    const output = [...end.stdoutLines, ...end.stderrLines].join("\n");
    expect(end.exitCode, output).toBe(1);
    expect(output).toMatch(/^probe: the -max-time limit of 1s was reached before the service saturated \(\d+ requests sent\)$/m);
    expect(output).not.toMatch(/errors 0 \(0\.0 %\)/);
    expect(Math.max(...service.bytesPerClosedConnection)).toBeLessThanOrEqual(trickleBytesWithin(DEADLINE_FIRST_MS));
  });
});
