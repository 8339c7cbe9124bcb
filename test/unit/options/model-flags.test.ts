import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { serverModelOf } from "../../../src/config/server-system.ts";
import { parseServerArgs, resolveServerOptions } from "../../../src/options/server.ts";
import { parseSimArgs, resolveSimOptions } from "../../../src/options/sim.ts";

function serverModel(args: string[]) {
  const parsed = parseServerArgs(args);
  if (parsed.kind !== "run") throw new Error("help");
  return serverModelOf(resolveServerOptions(parsed.values));
}

describe("-model and its flags", () => {
  it("is the exponential model with today's flags when no model is named", () => {
    expect(serverModel([])).toEqual({ kind: "exponential", latency: { baseDelayMs: 100, limit: 30, factor: 1.05, exponentDivisor: 15 } });
  });

  it("reads each model's own flags, with their defaults", () => {
    expect(serverModel(["-model", "linear", "-baseDelay", "1s", "-slope", "10ms"])).toEqual({
      kind: "linear",
      latency: { kind: "linear", baseDelayMs: 1000, slopeMs: 10 },
    });
    expect(
      serverModel(["-model", "queue", "-threads", "4", "-service-time", "50ms", "-queue-limit", "10", "-queue-order", "lifo"]),
    ).toEqual({
      kind: "queue",
      pool: { threads: 4, serviceTimeMs: 50, serviceDist: "constant", serviceSigma: 0.5, queueOrder: "lifo", queueLimit: 10 },
    });
    expect(serverModel(["-model", "queue"])).toMatchObject({ pool: { threads: 8, serviceTimeMs: 20, queueLimit: Infinity } });
  });

  it("refuses a flag the chosen model does not read, naming those it takes", () => {
    const cases: [string[], string][] = [
      [["-model", "queue", "-limit", "5"], "-limit does not apply to -model queue (it takes -threads"],
      [["-model", "queue", "-max-concurrency", "5"], "-max-concurrency does not apply to -model queue"],
      [["-model", "linear", "-factor", "2"], "-factor does not apply to -model linear (it takes -baseDelay, -slope, -max-concurrency)"],
      [["-threads", "4"], "-threads does not apply to -model exponential"],
      [["-slope", "1ms"], "-slope does not apply to -model exponential"],
      [["-model", "queue", "-service-sigma", "1"], "-service-sigma needs -service-dist lognormal"],
    ];
    for (const [args, message] of cases) {
      const parsed = parseServerArgs(args);
      if (parsed.kind !== "run") throw new Error("help");
      expect(() => resolveServerOptions(parsed.values)).toThrow(UsageError);
      expect(() => resolveServerOptions(parsed.values)).toThrow(message);
    }
  });

  it("takes the same flags in the simulator", () => {
    const parsed = parseSimArgs(["-model", "queue", "-threads", "2", "-service-dist", "lognormal", "-service-sigma", "1"]);
    if (parsed.kind !== "run") throw new Error("help");
    expect(resolveSimOptions(parsed.values).server.model).toMatchObject({ kind: "queue", pool: { threads: 2, serviceSigma: 1 } });
    const wrong = parseSimArgs(["-model", "linear", "-threads", "2"]);
    if (wrong.kind !== "run") throw new Error("help");
    expect(() => resolveSimOptions(wrong.values)).toThrow("-threads does not apply to -model linear");
  });
});
