import { describe, expect, it } from "vitest";
import { neighbourTargets, settingsKey } from "../../../src/check/neighbours.ts";

describe("check's one-field changes", () => {
  const jitter = { strategy: "full-jitter", "min-delay": "100ms", "max-delay": "1s", "max-attempts": "5", budget: "grpc" };

  it("moves each knob the format can write, one at a time, and nothing it cannot", () => {
    const changes = neighbourTargets(jitter, ["max-attempts", "min-delay", "max-delay", "budget"]);
    for (const neighbour of changes) {
      const moved = Object.keys({ ...neighbour.target, ...jitter }).filter(
        (flag) => neighbour.target[flag] !== (jitter as Record<string, string>)[flag],
      );
      expect(moved).toHaveLength(1);
    }
    const moved = (flag: string) =>
      changes
        .filter((neighbour) => neighbour.target[flag] !== (jitter as Record<string, string>)[flag])
        .map((neighbour) => neighbour.target[flag]);
    expect(moved("max-attempts")).toEqual(["2", "3"]);
    expect(moved("min-delay")).toEqual(["200ms", "1s"]);
    expect(moved("max-delay")).toEqual(["2s", "10s"]);
    // The budget is on: its parameters halved and doubled, from their published defaults (10 tokens, ratio 0.1).
    expect(moved("budget-tokens")).toEqual(["5", "20"]);
    expect(moved("budget-ratio")).toEqual(["0.05", "0.2"]);
    expect(changes.some((neighbour) => neighbour.target.breaker !== undefined)).toBe(false);
  });

  it("tries a stand-in share at its published value, not halved: Envoy's max_retries alone reads as a budget with no share", () => {
    const envoy = {
      strategy: "full-jitter",
      "min-delay": "25ms",
      "max-delay": "250ms",
      "max-attempts": "2",
      budget: "envoy",
      "budget-percent": "0.0001",
      "budget-min-concurrency": "3",
    };
    const changes = neighbourTargets(envoy, ["budget"]);
    expect(changes.map((neighbour) => [neighbour.target["budget-percent"], neighbour.target["budget-min-concurrency"]])).toEqual([
      ["20", "3"],
      ["0.0001", "2"],
      ["0.0001", "6"],
    ]);
  });

  it("switches a protection on with each of its kinds when the policy has none, for the format to say which it can", () => {
    const changes = neighbourTargets({ strategy: "fixed", "simple-backoff-delay": "100ms" }, ["breaker"]);
    expect(changes.map((neighbour) => neighbour.target.breaker)).toEqual(["consecutive", "sampling", "yandex-retry", "brooker-retry"]);
  });

  it("leaves a parameter its strategy does not read alone: a fixed retry has no first or longest wait to move", () => {
    const changes = neighbourTargets({ strategy: "fixed", "simple-backoff-delay": "100ms" }, [
      "min-delay",
      "max-delay",
      "backoff-factor",
      "jitter",
    ]);
    expect(changes).toEqual([]);
  });

  it("tries jitter on a strategy that reads it and has little, and other growth factors", () => {
    const grpc = { strategy: "grpc", "min-delay": "100ms", "max-delay": "1s", "backoff-factor": "1.5", jitter: "0" };
    const changes = neighbourTargets(grpc, ["backoff-factor", "jitter"]);
    expect(changes.map((neighbour) => neighbour.change)).toEqual([
      "growth per retry 2 (was 1.5)",
      "growth per retry 3 (was 1.5)",
      "jitter 0.2 (was 0)",
      "jitter 0.5 (was 0)",
    ]);
  });

  it("compares settings whatever order their flags were set in", () => {
    expect(settingsKey({ a: "1", b: "2" })).toBe(settingsKey({ b: "2", a: "1" }));
    expect(settingsKey({ a: "1" })).not.toBe(settingsKey({ a: "2" }));
  });
});
