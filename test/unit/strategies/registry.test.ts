import { describe, expect, it } from "vitest";
import {
  buildStrategyPolicy,
  findStrategy,
  STRATEGY_CHOICES,
  STRATEGY_PARAMETER_FLAGS,
  type StrategyParameterValues,
} from "../../../src/strategies/registry.ts";

describe("building a strategy's policy from its flags", () => {
  it("names the flags of a field out of range, from the error's fields rather than its message", () => {
    const values = (overrides: Partial<StrategyParameterValues>) =>
      ({
        ...Object.fromEntries(STRATEGY_PARAMETER_FLAGS.map((flag) => [flag.name, flag.default])),
        ...overrides,
      }) as StrategyParameterValues;
    expect(() => buildStrategyPolicy("exponential", values({ "min-delay": 2000, "max-delay": 1000 }))).toThrow(
      "invalid settings for -strategy exponential: -min-delay (ms) must be <= -max-delay (ms) (got 2000 > 1000)",
    );
    expect(() => buildStrategyPolicy("grpc", values({ "backoff-factor": 1, jitter: 1, "min-delay": 5000, "max-delay": 10 }))).toThrow(
      "invalid settings for -strategy grpc: -min-delay (ms) must be <= -max-delay (ms) (got 5000 > 10)",
    );
  });
});

describe("the strategies' names", () => {
  it("takes the article's names as aliases: constant for fixed, reference for exponential-backoff", () => {
    expect(findStrategy("constant")?.name).toBe("fixed");
    expect(findStrategy("reference")?.name).toBe("exponential-backoff");
    expect(STRATEGY_CHOICES).toEqual(expect.arrayContaining(["fixed", "constant", "exponential-backoff", "reference"]));
    expect(findStrategy("hope")).toBeUndefined();
  });
});
