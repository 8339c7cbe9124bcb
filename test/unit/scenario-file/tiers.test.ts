import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { describeFailure, InputFileError, UsageError } from "../../../src/cli/usage-error.ts";
import { parseScenario } from "../../../src/scenario-file/read.ts";
import { printScenario } from "../../../src/scenario-file/print.ts";
import { main as simMain } from "../../../src/sim/main.ts";
import { parseSimArgs, SIM_TARGET } from "../../../src/options/sim.ts";
import type { ChainReport } from "../../../src/runner/chain-report.ts";
import { capturedIo } from "../../helpers/captured-io.ts";

const CHAIN = `scenario: 1
name: Two tiers
system: {clients: 50, lambda: 1, timeout: 3s}
strategy: {strategy: fixed, max-attempts: 3}
tiers:
  - name: edge
    system: {model: queue, threads: 64, service-time: 2ms}
    upstream: {strategy: fixed, max-attempts: 2, timeout: 500ms, budget: yandex}
    fanout: 2
  - name: db
    system: {model: queue, threads: 16, service-time: 10ms}
faults: ["db:errors@5s+5s*1"]
run: {duration: 20s}
`;

async function failure(text: string): Promise<string> {
  try {
    await parseScenario(text, "chain.yaml", SIM_TARGET);
  } catch (error) {
    expect(error).toBeInstanceOf(InputFileError);
    return describeFailure("sim", error).text;
  }
  throw new Error("the file was accepted");
}

describe("a scenario file's tiers:", () => {
  it("reads each tier's system and upstream as flags, with its fan-out", async () => {
    const scenario = await parseScenario(CHAIN, "chain.yaml", SIM_TARGET);
    expect(scenario.tiers!.map(({ name, system, upstream, fanout }) => ({ name, system, upstream, fanout }))).toEqual([
      {
        name: "edge",
        system: ["-model=queue", "-threads=64", "-service-time=2ms"],
        // In the flag table's order, as a section's keys are.
        upstream: ["-timeout=500ms", "-strategy=fixed", "-max-attempts=2", "-budget=yandex"],
        fanout: 2,
      },
      { name: "db", system: ["-model=queue", "-threads=16", "-service-time=10ms"], upstream: [], fanout: 1 },
    ]);
    expect(scenario.tokens).toContain("-faults=db:errors@5s+5s*1");
  });

  it("refuses what a chain cannot mean, naming the line and the key", async () => {
    expect(await failure(CHAIN.replace("system: {clients: 50,", "system: {threads: 8, clients: 50,"))).toMatch(
      /^chain.yaml:3: threads: with tiers:, system holds the users' flags only; a server's flag goes in each tier's system/,
    );
    expect(await failure(CHAIN.replace("service-time: 10ms}", "service-time: 10ms}\n    upstream: {max-attempts: 2}"))).toMatch(
      /chain.yaml:\d+: upstream: the bottom tier calls nobody/,
    );
    expect(await failure(CHAIN.replace("name: db", "name: edge"))).toMatch(/name: a second tier named edge/);
    expect(await failure(CHAIN.replace("threads: 16,", "threds: 16,"))).toMatch(
      /chain.yaml:11: threds: unknown key; a tier's system takes .\/server's model and protection flags; did you mean threads\?/,
    );
    expect(await failure(CHAIN.replace("fanout: 2", "fanout: 2\n    fan: 3"))).toMatch(
      /fan: unknown key; a tier has name, system, upstream, fanout/,
    );
    expect(await failure(CHAIN.replace("name: db", "name: Db"))).toMatch(/name: must be a name of lower-case letters/);
    expect(await failure(CHAIN.replace("fanout: 2", "fanout: 0"))).toMatch(/fanout: must be an integer from 1 to 64/);
  });

  it("holds a chain to the limits of ./server and the simulator: a fan-out of 64 at most, 64 tiers at most", async () => {
    expect(await failure(CHAIN.replace("fanout: 2", "fanout: 1000000"))).toBe("chain.yaml:9: fanout: must be an integer from 1 to 64\n");
    const tiers = (count: number) =>
      Array.from({ length: count }, (_, index) => `  - name: t${index}\n    system: {model: queue}\n`).join("");
    const chain = (count: number) => `scenario: 1\ntiers:\n${tiers(count)}`;
    expect((await parseScenario(chain(64), "chain.yaml", SIM_TARGET)).tiers).toHaveLength(64);
    // The 65th tier's line: two lines a tier after the file's first two.
    expect(await failure(chain(1000))).toBe(`chain.yaml:${3 + 64 * 2}: tiers: a chain has at most 64 tiers\n`);
  });

  it("is written back by -print-scenario and reads back the same", async () => {
    const scenario = await parseScenario(CHAIN, "chain.yaml", SIM_TARGET);
    const parsed = parseSimArgs(scenario.tokens);
    if (parsed.kind !== "run") throw new Error("no help asked");
    const printed = await printScenario(SIM_TARGET, parsed.values, {}, scenario.metadata, scenario.tiers);
    const again = await parseScenario(printed, "printed.yaml", SIM_TARGET);
    expect(again.tiers!.map((tier) => [tier.name, tier.system, tier.upstream, tier.fanout])).toEqual(
      scenario.tiers!.map((tier) => [tier.name, tier.system, tier.upstream, tier.fanout]),
    );
  });
});

describe("./sim with a chain", () => {
  it("runs examples/three-tiers.yaml: the attempts multiply down the chain, as the policies say at most", async () => {
    const file = resolve(import.meta.dirname, "../../../examples/three-tiers.yaml");
    const { io, stdout, stderr } = capturedIo();
    // Scaled down: fewer users, the same chain and fault.
    expect(await simMain([file, "-json", "-clients", "300"], io)).toBe(0);
    expect(stderr()).toMatch(/^sim: chain edge → api → db; users 300 clients/);
    const report = JSON.parse(stdout()) as ChainReport;
    expect(report.tiers.map((tier) => [tier.name, tier.policyAmplification])).toEqual([
      ["edge", 3],
      ["api", 9],
      ["db", 27],
    ]);
    for (const tier of report.tiers) {
      // Over the run every tier saw more than the users sent it, and during the db's crash far more, never more than the policies allow.
      expect(tier.amplification).toBeGreaterThan(1);
      expect(tier.faultAmplification!).toBeLessThanOrEqual(tier.policyAmplification!);
      expect(tier.faultAmplification!).toBeGreaterThan(0.75 * tier.policyAmplification!);
      expect(tier.peakLoad!).toBeGreaterThanOrEqual(1);
    }
    expect(report.tiers[2]!.peakLoad!).toBeGreaterThan(report.tiers[0]!.peakLoad!);
    expect(report.firstCollapsed).toBe("db");
    expect(report.tiers.map((tier) => tier.verdict)).toEqual(["recovered", "recovered", "recovered"]);
    const text = capturedIo();
    expect(await simMain([file, "-clients", "300"], text.io)).toBe(0);
    expect(text.stdout()).toMatch(/^db +\d+ +[\d.]+x +[\d.]+x +27x .* recovered +20s +\d+s/m);
    expect(text.stdout()).toMatch(/first to collapse: db at 20s \(goodput below half its normal\), by its own fault db:crash@15s\+15s/);
    // Window by window (-interval, 5 s by default), each tier's arrivals and goodput per second; the JSON has the same figures.
    expect(text.stdout()).toMatch(/^window to +edge in\/s +edge OK\/s +api in\/s +api OK\/s +db in\/s +db OK\/s$/m);
    const windows = report.windows;
    expect(windows.map((window) => window.endMs)).toEqual(Array.from({ length: 10 }, (_, index) => (index + 1) * 5_000));
    const during = windows.find((window) => window.endMs === 20_000)!;
    // The db crashed at 15 s: it answers nothing OK in the window to 20 s, and its callers' retries multiply down to it.
    expect(during.tiers[2]!.okPerSec).toBe(0);
    expect(during.tiers[2]!.arrivalsPerSec).toBeGreaterThan(during.tiers[0]!.arrivalsPerSec);
    const row = during.tiers.flatMap((tier) => [tier.arrivalsPerSec.toFixed(1), tier.okPerSec.toFixed(1)]).join(" +");
    expect(text.stdout()).toMatch(new RegExp(`^20s +${row}$`, "m"));
  });

  it("prints the chain it would run with -print-scenario, faults on tiers included", async () => {
    const file = resolve(import.meta.dirname, "../../../examples/three-tiers.yaml");
    const { io, stdout } = capturedIo();
    expect(await simMain([file, "-print-scenario", "-clients", "300"], io)).toBe(0);
    const again = await parseScenario(stdout(), "printed.yaml", SIM_TARGET);
    expect(again.tiers!.map((tier) => tier.name)).toEqual(["edge", "api", "db"]);
    expect(again.tokens).toEqual(expect.arrayContaining(["-clients=300", "-faults=db:crash@15s+15s"]));
  });

  it("refuses a fault on a tier the chain lacks, and a server's flag beside the file", async () => {
    const file = resolve(import.meta.dirname, "../../../examples/three-tiers.yaml");
    await expect(simMain([file, "-faults", "cache:stop@1s+1s"], capturedIo().io)).rejects.toThrow(
      "-faults: the fault cache:stop names no tier of the chain (edge, api, db)",
    );
    await expect(simMain([file, "-threads", "4"], capturedIo().io)).rejects.toThrow(/-threads does not apply to a chain of tiers/);
    await expect(simMain(["-faults", "db:stop@1s+1s"], capturedIo().io)).rejects.toThrow(/names a tier, but there is no chain of tiers/);
  });

  it("refuses users, windows and spikes past the simulator's limits, before running", async () => {
    const file = resolve(import.meta.dirname, "../../../examples/three-tiers.yaml");
    await expect(simMain([file, "-clients", "20000000"], capturedIo().io)).rejects.toThrow(
      new UsageError('invalid value "20000000" for flag -clients: the simulator runs at most 10000000 clients'),
    );
    await expect(simMain([file, "-interval", "1us", "-duration", "1h"], capturedIo().io)).rejects.toThrow(
      new UsageError('invalid value "1µs" for flag -interval: more than 10000000 client windows in -duration 1h0m0s'),
    );
    await expect(simMain([file, "-faults", "spike@1s+1s*1e308"], capturedIo().io)).rejects.toThrow(
      new UsageError("-faults: the spike spike@1s+1s*1e+308 runs 1e+308 times the 100 clients; at most 10000000 clients in all"),
    );
  });
});
