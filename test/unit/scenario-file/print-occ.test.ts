import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseFlags } from "../../../src/cli/flags.ts";
import { printScenario } from "../../../src/scenario-file/print.ts";
import { parseScenario, readScenarioFile } from "../../../src/scenario-file/read.ts";
import { main as simMain } from "../../../src/sim/main.ts";
import { OCC_SIM_PROGRAM, OCC_SIM_TARGET, occRun } from "../../../src/options/occ.ts";
import { SIM_TARGET } from "../../../src/options/sim.ts";
import { capturedIo } from "../../helpers/captured-io.ts";

/** Every flag of the OCC workload's simulator away from its default. */
const OCC_ARGS = [
  "-workload",
  "occ",
  "-clients",
  "7",
  "-sweep-clients",
  "4,6",
  "-strategies",
  "none,full-jitter",
  "-base",
  "3ms",
  "-cap",
  "1.5s",
  "-net-delay",
  "1.5ms",
  "-net-delay-sd",
  "250us",
  "-trials",
  "2",
  "-seed",
  "9",
];

function occValues(args: readonly string[]) {
  const parsed = parseFlags(OCC_SIM_PROGRAM, args);
  if (parsed.kind !== "run") throw new Error("help");
  return parsed.values;
}

async function runSim(args: readonly string[]): Promise<{ code: unknown; stdout: string; stderr: string }> {
  const { io, stdout, stderr } = capturedIo();
  const code = await simMain(args, io);
  return { code, stdout: stdout(), stderr: stderr() };
}

describe("-print-scenario for the OCC workload", () => {
  const dir = mkdtempSync(join(tmpdir(), "print-occ-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes workload: occ at the top and every flag away from its default in its section", async () => {
    expect(await printScenario(OCC_SIM_TARGET, occValues(OCC_ARGS))).toBe(
      [
        "scenario: 1",
        "workload: occ",
        "system:",
        "  clients: 7",
        "  net-delay: 1.5ms",
        "  net-delay-sd: 250µs",
        "strategy:",
        "  base: 3ms",
        "  cap: 1.5s",
        "run:",
        "  sweep-clients: 4,6",
        "  strategies: none,full-jitter",
        "  trials: 2",
        "  seed: 9",
        "",
      ].join("\n"),
    );
    expect(await printScenario(OCC_SIM_TARGET, occValues([]))).toBe("scenario: 1\nworkload: occ\n");
    // The requests workload, the default, names none.
    expect(await printScenario(SIM_TARGET, {})).toBe("scenario: 1\n");
  });

  it("reads back as the same run: policies, client counts, backoff, network, runs and seed", async () => {
    const values = occValues(OCC_ARGS);
    const scenario = await parseScenario(await printScenario(OCC_SIM_TARGET, values), "printed.yaml", [SIM_TARGET, OCC_SIM_TARGET]);
    expect(scenario.workload).toBe("occ");
    expect(occRun(occValues(scenario.tokens))).toEqual(occRun(values));
    expect(occRun(values).counts).toEqual([4, 6]);
  });

  it("keeps example 02's run and its metadata", async () => {
    const example = await readScenarioFile("examples/02-aws-backoff-jitter.yaml", [SIM_TARGET, OCC_SIM_TARGET]);
    const values = occValues(example.tokens);
    const printed = await parseScenario(await printScenario(OCC_SIM_TARGET, values, {}, example.metadata), "printed.yaml", [
      SIM_TARGET,
      OCC_SIM_TARGET,
    ]);
    expect(printed.metadata).toEqual(example.metadata);
    expect(occRun(occValues(printed.tokens))).toEqual(occRun(values));
  });

  it("round-trips through ./sim: the file it prints runs the figures the flags run, and a flag beside it wins", async () => {
    const first = await runSim([...OCC_ARGS, "-print-scenario"]);
    expect(first.code).toBe(0);
    expect(first.stderr).toBe("");
    const file = join(dir, "occ.yaml");
    writeFileSync(file, `name: from flags\n${first.stdout}`);
    const again = await runSim([file, "-print-scenario"]);
    expect(again.stdout).toBe(first.stdout.replace("scenario: 1\n", "scenario: 1\nname: from flags\n"));
    const fromFlags = await runSim([...OCC_ARGS, "-json"]);
    const fromFile = await runSim([file, "-json"]);
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout.trim().split("\n")).toHaveLength(4);
    expect(fromFile.stdout).toBe(fromFlags.stdout);
    expect((await runSim([file, "-print-scenario", "-trials", "5"])).stdout).toMatch(/^ {2}trials: 5$/m);
  });

  it("refuses in one line what a file of workload occ cannot hold", async () => {
    const file = join(dir, "chain.yaml");
    writeFileSync(file, "scenario: 1\nworkload: occ\ntiers:\n  - name: edge\n  - name: db\n");
    await expect(runSim([file, "-print-scenario"])).rejects.toThrow(
      `${file}:3: tiers: workload occ has no chain of tiers; a chain is a scenario of workload requests`,
    );
    await expect(runSim(["-workload", "occ", "-model", "queue", "-print-scenario"])).rejects.toThrow(
      "flag provided but not defined: -model",
    );
  });
});
