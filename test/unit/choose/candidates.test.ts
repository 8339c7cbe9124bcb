import { describe, expect, it } from "vitest";
import {
  type Candidate,
  clientGrid,
  pair,
  parameterVariants,
  type RegistryView,
  selectedBy,
  serverLevers,
} from "../../../src/choose/candidates.ts";
import { argsToSettings, registryView } from "../../../src/choose/registry-view.ts";
import { SIM_FLAG_SPECS } from "../../../src/choose/settings.ts";
import type { FlagSpec } from "../../../src/cli/flags.ts";
import { concurrencyForDelay, DEFAULT_LATENCY_MODEL, modelledDelayMs } from "../../../src/model/latency.ts";
import { STRATEGY_NAMES } from "../../../src/strategies/registry.ts";

const byId = (grid: readonly Candidate[]) => new Map(grid.map((candidate) => [candidate.id, candidate]));

/** The simulator's flags plus client-side mechanisms as another branch might add them: data only. */
function flagsWith(extra: readonly FlagSpec[]): ReadonlyMap<string, FlagSpec> {
  return new Map([...SIM_FLAG_SPECS, ...extra.map((flag) => [flag.name, flag] as const)]);
}

describe("the grid of client candidates", () => {
  it("starts with the two baselines and holds every strategy of the registry, with variants, under unique ids", () => {
    const grid = clientGrid(registryView(SIM_FLAG_SPECS), SIM_FLAG_SPECS);
    expect(grid.slice(0, 2).map((candidate) => [candidate.id, candidate.client])).toEqual([
      ["no-retries", { strategy: "fixed", "max-attempts": "1" }],
      ["fixed", { strategy: "fixed" }],
    ]);
    const ids = byId(grid);
    expect(ids.size).toBe(grid.length);
    for (const name of STRATEGY_NAMES) {
      expect(ids.has(name), name).toBe(true);
      expect(ids.get(`${name}:max-attempts=3`)?.client).toEqual({ strategy: name, "max-attempts": "3" });
    }
    // The first wait ten times longer, where a strategy's registry entry has one.
    expect(ids.get("full-jitter:min-delay=1s")?.client).toEqual({ strategy: "full-jitter", "min-delay": "1s" });
    expect(ids.get("fixed:simple-backoff-delay=1s")?.client).toEqual({ strategy: "fixed", "simple-backoff-delay": "1s" });
    expect(ids.get("grpc:min-delay=10s")?.client).toEqual({ strategy: "grpc", "min-delay": "10s" });
    // The reference backoff's first wait comes from the think time: no min-delay variant.
    expect([...ids.keys()].some((id) => id.startsWith("exponential-backoff:min-delay"))).toBe(false);
    // The per-user retry budget on fixed retry and full jitter, its parameters halved and doubled.
    expect(ids.get("full-jitter:retry-budget:budget-tokens=20")?.client).toEqual({
      strategy: "full-jitter",
      "retry-budget": "true",
      "budget-tokens": "20",
    });
    expect(ids.has("fixed:retry-budget")).toBe(true);
  });

  it("takes presets and client-side mechanisms from the registry and the flag table, with variants of their parameters", () => {
    const registry: RegistryView = {
      strategies: [
        { name: "fixed", parameters: { "simple-backoff-delay": "100ms" } },
        { name: "full-jitter", parameters: { "min-delay": "100ms", "max-delay": "5m0s" } },
      ],
      presets: [{ name: "grpc-throttled", summary: "gRPC's backoff with throttling", client: { strategy: "grpc", budget: "grpc" } }],
    };
    const flags = flagsWith([
      { name: "budget", kind: "string", default: "off", choices: ["off", "grpc", "envoy"], description: "" },
      { name: "budget-percent", kind: "number", default: 20, min: 0, max: 30, description: "" },
      { name: "breaker", kind: "string", default: "none", choices: ["none", "consecutive", "sampling"], description: "" },
      { name: "breaker-threshold", kind: "integer", default: 5, min: 1, description: "" },
      { name: "breaker-half-open", kind: "duration", default: 10_000, minMs: 0, description: "" },
      { name: "throttle", kind: "string", default: "off", choices: ["off", "sre"], description: "" },
    ]);
    const ids = byId(clientGrid(registry, flags));
    expect(ids.get("grpc-throttled")).toMatchObject({ origin: "preset", client: { strategy: "grpc", budget: "grpc" } });
    for (const base of ["fixed", "full-jitter"]) {
      expect(ids.get(`${base}:budget=grpc`)?.client).toEqual({ strategy: base, budget: "grpc" });
      expect(ids.get(`${base}:budget=envoy`)?.client).toEqual({ strategy: base, budget: "envoy" });
      expect(ids.get(`${base}:breaker=sampling`)?.client).toEqual({ strategy: base, breaker: "sampling" });
      expect(ids.get(`${base}:throttle=sre`)?.client).toEqual({ strategy: base, throttle: "sre" });
      expect(ids.has(`${base}:budget=off`)).toBe(false);
    }
    // Parameters halved and doubled (within the flag's range), on full jitter.
    expect(ids.get("full-jitter:budget=envoy:budget-percent=10")?.client).toEqual({
      strategy: "full-jitter",
      budget: "envoy",
      "budget-percent": "10",
    });
    expect(ids.has("full-jitter:budget=envoy:budget-percent=30")).toBe(true); // 40 clamped to the maximum
    expect(ids.has("full-jitter:breaker=consecutive:breaker-threshold=3")).toBe(true); // 2.5 rounded
    expect(ids.has("full-jitter:breaker=consecutive:breaker-threshold=10")).toBe(true);
    expect(ids.has("full-jitter:breaker=sampling:breaker-half-open=5s")).toBe(true);
    expect(ids.has("full-jitter:breaker=sampling:breaker-half-open=20s")).toBe(true);
  });

  it("has fewer entries where the simulator lacks a flag", () => {
    const without = new Map([...SIM_FLAG_SPECS].filter(([name]) => name !== "max-attempts" && name !== "retry-budget"));
    const grid = clientGrid(registryView(SIM_FLAG_SPECS), without);
    expect(grid.some((candidate) => candidate.id.includes("max-attempts=3"))).toBe(false);
    expect(grid.some((candidate) => candidate.id.includes("retry-budget"))).toBe(false);
    expect(grid.length).toBeLessThan(clientGrid(registryView(SIM_FLAG_SPECS), SIM_FLAG_SPECS).length);
  });
});

describe("parameter variants", () => {
  it("halves and doubles a default within the flag's range, in the flag's own notation", () => {
    expect(parameterVariants({ name: "p", kind: "number", default: 0.1, min: 0, minExclusive: true, description: "" })).toEqual([
      "0.05",
      "0.2",
    ]);
    expect(parameterVariants({ name: "p", kind: "number", default: 800, max: 1000, description: "" })).toEqual(["400", "1000"]);
    expect(parameterVariants({ name: "p", kind: "integer", default: 1, min: 1, description: "" })).toEqual(["2"]);
    expect(parameterVariants({ name: "p", kind: "duration", default: 1500, minMs: 0, description: "" })).toEqual(["750ms", "3s"]);
    expect(parameterVariants({ name: "p", kind: "number", default: undefined, description: "" })).toEqual([]);
    expect(parameterVariants({ name: "p", kind: "boolean", default: false, description: "" })).toEqual([]);
  });
});

describe("server levers", () => {
  it("sheds load before the delay reaches half the client timeout, on the user's own latency model", () => {
    const levers = serverLevers(SIM_FLAG_SPECS, DEFAULT_LATENCY_MODEL, 2_000);
    const shedAt = concurrencyForDelay(DEFAULT_LATENCY_MODEL, 1_000) - 1;
    expect(levers.map((lever) => lever.id)).toEqual([
      "default",
      "backlog=128",
      "cancel-on-disconnect",
      `shed=${shedAt}`,
      `shed=${shedAt}+retry-after=1s`,
      "deadline-aware",
    ]);
    expect(modelledDelayMs(DEFAULT_LATENCY_MODEL, shedAt)).toBeLessThan(1_000);
    expect(modelledDelayMs(DEFAULT_LATENCY_MODEL, shedAt + 1)).toBeGreaterThanOrEqual(1_000);
    expect(levers[3]!.server).toEqual({ "max-concurrency": String(shedAt) });
  });

  it("adds Retry-After and deadline-aware admission when the simulator has them, with the client flag a lever needs", () => {
    const flags = flagsWith([
      { name: "retry-after", kind: "duration", default: 0, description: "" },
      { name: "deadline-aware", kind: "boolean", default: false, description: "" },
      { name: "propagate-deadline", kind: "boolean", default: false, description: "" },
    ]);
    const levers = serverLevers(flags, DEFAULT_LATENCY_MODEL, 2_000);
    const deadline = levers.find((lever) => lever.id === "deadline-aware")!;
    expect(deadline).toMatchObject({ server: { "deadline-aware": "true" }, client: { "propagate-deadline": "true" } });
    expect(levers.some((lever) => lever.id.endsWith("+retry-after=1s"))).toBe(true);
    const client = clientGrid(registryView(SIM_FLAG_SPECS), SIM_FLAG_SPECS)[1]!;
    expect(pair(client, deadline)).toMatchObject({
      id: "fixed@deadline-aware",
      clientId: "fixed",
      lever: "deadline-aware",
      client: { strategy: "fixed", "propagate-deadline": "true" },
      server: { "deadline-aware": "true" },
    });
  });
});

describe("selecting candidates", () => {
  it("matches exact ids and prefixes, and always keeps the baselines", () => {
    const grid = clientGrid(registryView(SIM_FLAG_SPECS), SIM_FLAG_SPECS);
    const chosen = grid.filter((candidate) => selectedBy(["grpc", "full-jitter:*"], candidate)).map((candidate) => candidate.id);
    expect(chosen.slice(0, 2)).toEqual(["no-retries", "fixed"]);
    expect(chosen).toContain("grpc");
    expect(chosen).toContain("full-jitter:max-attempts=3");
    expect(chosen).not.toContain("full-jitter"); // the prefix includes the colon
    expect(chosen).not.toContain("grpc:max-attempts=3");
    expect(chosen).toContain("full-jitter:retry-budget");
    expect(chosen).not.toContain("equal-jitter");
  });
});

describe("reading the registry", () => {
  it("reads presets in any of the forms a registry may export, and the choices of a -preset flag", () => {
    const flags = flagsWith([
      { name: "preset", kind: "string", default: "none", choices: ["none", "aws-standard", "breaker"], description: "" },
    ]);
    const module = {
      STRATEGIES: [{ name: "fixed", aliases: [], parameters: { "simple-backoff-delay": "100ms" } }],
      RETRY_PRESETS: [
        { name: "envoy-budget", summary: "Envoy's budget", flags: { strategy: "full-jitter", "max-attempts": 3, "min-delay": 25 } },
        { name: "sre-throttle", args: ["-strategy", "full-jitter", "-retry-budget", "--budget-ratio=0.2"] },
        { name: "not-a-preset" },
      ],
      OTHER: [{ name: "ignored", flags: { strategy: "fixed" } }],
    };
    const view = registryView(flags, module);
    expect(view.strategies).toEqual([{ name: "fixed", parameters: { "simple-backoff-delay": "100ms" } }]);
    expect(view.presets).toEqual([
      { name: "envoy-budget", summary: "Envoy's budget", client: { strategy: "full-jitter", "max-attempts": "3", "min-delay": "25ms" } },
      {
        name: "sre-throttle",
        summary: "preset sre-throttle",
        client: { strategy: "full-jitter", "retry-budget": "true", "budget-ratio": "0.2" },
      },
      { name: "aws-standard", summary: "preset aws-standard (-preset aws-standard)", client: { preset: "aws-standard" } },
      { name: "breaker", summary: "preset breaker (-preset breaker)", client: { preset: "breaker" } },
    ]);
  });

  it("reads Go-style arguments", () => {
    expect(argsToSettings(["-strategy", "grpc", "-retry-budget", "-max-attempts=4", "--min-delay", "1s"], SIM_FLAG_SPECS)).toEqual({
      strategy: "grpc",
      "retry-budget": "true",
      "max-attempts": "4",
      "min-delay": "1s",
    });
  });
});
