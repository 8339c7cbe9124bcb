import { describe, expect, it } from "vitest";
import { CLIENT_FLAGS, parseClientArgs, resolveClientOptions } from "../../../src/options/client.ts";
import { parseStrategies } from "../../../src/strategies/runs.ts";
import { PRESETS, presetValues } from "../../../src/strategies/presets.ts";
import { parseStrategyList, STRATEGY_NAMES, strategyOfRun } from "../../../src/strategies/registry.ts";

const options = (args: readonly string[]) => {
  const parsed = parseClientArgs(args);
  if (parsed.kind !== "run") throw new Error("help");
  return resolveClientOptions(parsed.values);
};

describe("protection flags", () => {
  it("take a parameter at its default for any mechanism, as the strategies' parameter flags do", () => {
    expect(options(["-budget", "grpc", "-budget-ttl", "10s"]).retry.fleet?.budget?.kind).toBe("grpc");
  });

  it("are off by default", () => {
    expect(options([]).retry.fleet).toEqual({ instances: 0, budget: undefined, throttle: undefined, breaker: undefined });
  });

  it("fill each mechanism's published defaults", () => {
    expect(options(["-budget", "envoy"]).retry.fleet?.budget).toEqual({
      kind: "envoy",
      budget: { budgetPercent: 20, minRetryConcurrency: 3 },
    });
    expect(options(["-budget", "finagle"]).retry.fleet?.budget).toEqual({
      kind: "finagle",
      budget: { ttlMs: 10_000, minRetriesPerSec: 10, percentCanRetry: 20 },
    });
    expect(options(["-budget", "aws", "-budget-quota", "50"]).retry.fleet?.budget).toEqual({
      kind: "aws",
      budget: { tokens: 50, retryCost: 5, timeoutRetryCost: 10, noRetryIncrement: 1 },
    });
    expect(options(["-throttle", "sre", "-throttle-window", "30s"]).retry.fleet?.throttle).toEqual({ k: 2, windowMs: 30_000, buckets: 12 });
    expect(options(["-breaker", "sampling", "-instances", "4"]).retry.fleet).toMatchObject({
      instances: 4,
      breaker: { kind: "sampling", failureRatio: 0.1, minimumThroughput: 100, samplingMs: 30_000, breakMs: 5_000 },
    });
    expect(options(["-budget", "yandex", "-budget-ratio", "0.2"]).retry.fleet?.budget).toEqual({
      kind: "yandex",
      budget: { capacity: 3000, retryCost: 100, earn: 20, earnOn: "first-try-success", strictlyAbove: false },
    });
    expect(options(["-budget", "brooker"]).retry.fleet?.budget).toEqual({
      kind: "brooker",
      budget: { capacity: 5, retryCost: 1, earn: 0.1, earnOn: "request", strictlyAbove: true },
    });
    expect(options(["-breaker", "yandex-retry"]).retry.fleet?.breaker).toEqual({ kind: "yandex-retry", failureRatio: 0.1, windowMs: 200 });
    expect(options(["-breaker", "brooker-retry", "-breaker-ratio", "0.2"]).retry.fleet?.breaker).toEqual({
      kind: "brooker-retry",
      failureRatio: 0.2,
    });
  });

  it("keep -retry-budget as -budget grpc", () => {
    const alias = options(["-retry-budget", "-budget-tokens", "4"]).retry.fleet;
    expect(alias).toEqual(options(["-budget", "grpc", "-budget-tokens", "4"]).retry.fleet);
    expect(alias?.budget).toEqual({ kind: "grpc", budget: { maxTokens: 4, tokenRatio: 0.1 } });
  });

  it.each([
    [["-budget-ttl", "5s"], "-budget-ttl needs -budget finagle"],
    [["-budget", "envoy", "-budget-ttl", "5s"], "-budget-ttl does not apply to -budget envoy (it is a parameter of -budget finagle)"],
    [
      ["-budget", "grpc", "-budget-percent", "5"],
      "-budget-percent does not apply to -budget grpc (it is a parameter of -budget envoy or -budget finagle)",
    ],
    [
      ["-breaker", "consecutive", "-breaker-ratio", "0.5"],
      "-breaker-ratio does not apply to -breaker consecutive (it is a parameter of -breaker sampling or -breaker yandex-retry or -breaker brooker-retry)",
    ],
    [["-throttle-k", "3"], "-throttle-k needs -throttle sre"],
    [["-budget", "brooker", "-budget-ratio", "0.5"], "-budget-ratio does not apply to -budget brooker"],
    [["-breaker", "yandex-retry", "-breaker-window", "1s"], "-breaker-window does not apply to -breaker yandex-retry"],
    [["-retry-budget", "-budget", "aws"], "-retry-budget is -budget grpc; it cannot be combined with -budget aws"],
    [["-budget", "envoy", "-budget-percent", "150"], "invalid protection settings: budgetPercent must be <= 100 (got 150)"],
    [["-budget", "aws", "-budget-tokens", "50"], "-budget-tokens does not apply to -budget aws (it is a parameter of -budget grpc)"],
  ])("reject %j", (args, message) => {
    expect(() => options(args)).toThrow(message);
  });
});

describe("presets", () => {
  it("are client flags the client takes, with the mechanism each names", () => {
    const expected: Record<string, object> = {
      "grpc-throttled": { budget: { kind: "grpc" } },
      "envoy-budget": { budget: { kind: "envoy" } },
      "aws-standard": { budget: { kind: "aws", budget: { tokens: 500, retryCost: 14, timeoutRetryCost: 14, noRetryIncrement: 1 } } },
      "aws-standard-pre-2026": {
        budget: { kind: "aws", budget: { tokens: 500, retryCost: 5, timeoutRetryCost: 10, noRetryIncrement: 1 } },
      },
      "sre-throttle": { throttle: { k: 2 } },
      breaker: { breaker: { kind: "consecutive", failureThreshold: 5, breakMs: 5_000 } },
    };
    expect(PRESETS.map((preset) => preset.name)).toEqual(Object.keys(expected));
    for (const preset of PRESETS) {
      const resolved = options(preset.args);
      expect(resolved.retry.fleet, preset.name).toMatchObject(expected[preset.name]!);
      // Parsed one by one, the flags give the same values the client's parser does.
      const parsed = parseClientArgs(preset.args);
      if (parsed.kind !== "run") throw new Error("help");
      for (const [name, value] of Object.entries(presetValues(preset, CLIENT_FLAGS))) expect(parsed.values).toHaveProperty(name, value);
    }
  });

  it("carry the shipped defaults: attempts and backoff", () => {
    const aws = options(PRESETS.find((preset) => preset.name === "aws-standard")!.args).retry;
    expect([aws.maxAttempts, aws.backoff]).toEqual([3, { kind: "full-jitter", baseMs: 50, capMs: 20_000 }]);
    const awsBefore = options(PRESETS.find((preset) => preset.name === "aws-standard-pre-2026")!.args).retry;
    expect([awsBefore.maxAttempts, awsBefore.backoff]).toEqual([3, { kind: "full-jitter", baseMs: 100, capMs: 20_000 }]);
    const envoy = options(PRESETS.find((preset) => preset.name === "envoy-budget")!.args).retry;
    expect([envoy.maxAttempts, envoy.backoff]).toEqual([2, { kind: "full-jitter", baseMs: 25, capMs: 250 }]);
    const grpc = options(PRESETS.find((preset) => preset.name === "grpc-throttled")!.args).retry;
    expect([grpc.maxAttempts, grpc.backoff]).toEqual([5, { kind: "full-jitter", baseMs: 100, capMs: 1_000 }]);
  });

  it("are accepted in -strategies lists beside strategies, alone or as 'presets'", () => {
    expect(parseStrategyList("fixed,aws-standard")).toEqual(["fixed", "aws-standard"]);
    expect(parseStrategyList("presets")).toEqual(PRESETS.map((preset) => preset.name));
    expect(parseStrategyList("all,breaker")).toEqual([...STRATEGY_NAMES, "breaker"]);
    expect(strategyOfRun("sre-throttle")).toBe("exponential");
    expect(parseStrategies("sre-throttle,constant")).toEqual([
      { name: "sre-throttle", clientArgs: ["-strategy", "exponential", "-throttle", "sre"] },
      { name: "fixed", clientArgs: ["-strategy", "fixed"] },
    ]);
    expect(() => parseStrategyList("hope")).toThrow('unknown strategy "hope"');
  });
});
