import { describe, expect, it } from "vitest";
import { DEFAULT_THREAD_POOL } from "../../../src/model/servers/queue.ts";
import { type Candidate, clientGrid, pair, parameterVariants, selectedBy, serverLevers } from "../../../src/recommend/candidates.ts";
import { simValuesFor } from "../../../src/recommend/settings.ts";
import { DEFAULT_LATENCY_MODEL } from "../../../src/model/latency.ts";
import { exponentialCurve } from "../../../src/model/servers/kinds/exponential.ts";
import { SIMULATION_FLAGS, simulationConfigFrom } from "../../../src/config/simulation.ts";
import { PRESETS, presetSettings } from "../../../src/strategies/presets.ts";
import { MECHANISMS } from "../../../src/strategies/protection.ts";
import { STRATEGY_NAMES } from "../../../src/strategies/registry.ts";

const byId = (grid: readonly Candidate[]) => new Map(grid.map((candidate) => [candidate.id, candidate]));

describe("the grid of client candidates", () => {
  it("starts with the two baselines and holds every strategy of the registry, with variants, under unique ids", () => {
    const grid = clientGrid();
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

  it("takes every preset and mechanism of the registry, with variants of the parameters each mechanism reads", () => {
    const grid = clientGrid();
    const ids = byId(grid);
    for (const preset of PRESETS) {
      expect(ids.get(preset.name)).toMatchObject({
        origin: "preset",
        summary: preset.summary,
        client: presetSettings(preset, SIMULATION_FLAGS),
      });
    }
    expect(ids.get("aws-standard-pre-2026")?.client).toEqual({
      strategy: "full-jitter",
      "min-delay": "100ms",
      "max-delay": "20s",
      "max-attempts": "3",
      budget: "aws",
    });
    for (const mechanism of MECHANISMS) {
      for (const base of ["fixed", "full-jitter"]) {
        expect(ids.get(`${base}:${mechanism.flag}=${mechanism.choice}`)?.client).toEqual({
          strategy: base,
          [mechanism.flag]: mechanism.choice,
        });
      }
    }
    // Parameters halved and doubled (within the flag's range), on full jitter, only with a mechanism that reads them.
    expect(ids.get("full-jitter:budget=envoy:budget-percent=10")?.client).toEqual({
      strategy: "full-jitter",
      budget: "envoy",
      "budget-percent": "10",
    });
    expect(ids.has("full-jitter:budget=finagle:budget-percent=40")).toBe(true);
    expect(ids.has("full-jitter:breaker=consecutive:breaker-failures=3")).toBe(true);
    expect(ids.has("full-jitter:breaker=sampling:breaker-window=1m0s")).toBe(true);
    expect(ids.has("full-jitter:budget=aws:budget-percent=10")).toBe(false);
    expect(ids.has("full-jitter:breaker=consecutive:breaker-window=15s")).toBe(false);
    // -retry-budget (-budget grpc) carries gRPC's parameters.
    expect(ids.has("full-jitter:retry-budget:budget-ratio=0.2")).toBe(true);
    expect(ids.has("full-jitter:budget=grpc:budget-ratio=0.2")).toBe(false);
    // Every candidate is one the simulator accepts on its default system.
    for (const entry of grid) expect(() => simulationConfigFrom(simValuesFor({}, entry.client)), entry.id).not.toThrow();
  });
});

describe("parameter variants", () => {
  it("halves and doubles a default within the flag's range, in the flag's own notation", () => {
    expect(
      parameterVariants({ name: "p", group: "run", kind: "number", default: 0.1, min: 0, minExclusive: true, description: "" }),
    ).toEqual(["0.05", "0.2"]);
    expect(parameterVariants({ name: "p", group: "run", kind: "number", default: 800, max: 1000, description: "" })).toEqual([
      "400",
      "1000",
    ]);
    expect(parameterVariants({ name: "p", group: "run", kind: "integer", default: 1, min: 1, description: "" })).toEqual(["2"]);
    expect(parameterVariants({ name: "p", group: "run", kind: "duration", default: 1500, minMs: 0, description: "" })).toEqual([
      "750ms",
      "3s",
    ]);
    expect(parameterVariants({ name: "p", group: "run", kind: "number", default: undefined, description: "" })).toEqual([]);
    expect(parameterVariants({ name: "p", group: "run", kind: "boolean", default: false, description: "" })).toEqual([]);
  });
});

describe("server levers", () => {
  it("sheds load before the delay reaches half the client timeout, on the user's own latency model", () => {
    const levers = serverLevers(DEFAULT_LATENCY_MODEL, 2_000);
    const shedAt = exponentialCurve.concurrencyForDelay(DEFAULT_LATENCY_MODEL, 1_000) - 1;
    expect(levers.map((lever) => lever.id)).toEqual([
      "default",
      "backlog=128",
      "cancel-on-disconnect",
      `shed=${shedAt}`,
      `shed=${shedAt}+retry-after=1s`,
      "deadline-aware",
    ]);
    expect(exponentialCurve.delayMs(DEFAULT_LATENCY_MODEL, shedAt)).toBeLessThan(1_000);
    expect(exponentialCurve.delayMs(DEFAULT_LATENCY_MODEL, shedAt + 1)).toBeGreaterThanOrEqual(1_000);
    expect(levers[3]!.server).toEqual({ "max-concurrency": String(shedAt) });
  });

  it("sheds with the queue model's own flag: beyond the waiting requests its threads serve in half the timeout", () => {
    const pool = { ...DEFAULT_THREAD_POOL, threads: 8, serviceTimeMs: 20 };
    const levers = serverLevers(DEFAULT_LATENCY_MODEL, 2_000, { kind: "queue", pool });
    // 8 threads serve 400 requests in 1 s.
    expect(levers.find((lever) => lever.id === "shed=400")!.server).toEqual({ "queue-limit": "400" });
    expect(levers.find((lever) => lever.id === "shed=400+retry-after=1s")!.server).toEqual({ "queue-limit": "400", "retry-after": "1s" });
  });

  it("pairs a client policy with a lever, with the client flag the lever needs", () => {
    const deadline = serverLevers(DEFAULT_LATENCY_MODEL, 2_000).find((lever) => lever.id === "deadline-aware")!;
    expect(deadline).toMatchObject({ server: { "deadline-aware": "true" }, client: { "propagate-deadline": "true" } });
    const client = clientGrid()[1]!;
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
    const grid = clientGrid();
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
