import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseFlags } from "../../../src/cli/flags.ts";
import { main as chooseMain } from "../../../src/choose/main.ts";
import { main as demoMain } from "../../../src/demo/main.ts";
import { sectionOf } from "../../../src/scenario-file/format.ts";
import { printScenario } from "../../../src/scenario-file/print.ts";
import { parseScenario } from "../../../src/scenario-file/read.ts";
import { main as simMain } from "../../../src/sim/main.ts";
import { SIM_FLAGS, SIM_PROGRAM, SIM_TARGET } from "../../../src/options/sim.ts";
import type { ProgramMain } from "../../../src/runtime/program-io.ts";

const SIM_ARGS = [
  "-clients",
  "50",
  "-timeout",
  "1.5s",
  "-model",
  "linear",
  "-slope",
  "10ms",
  "-faults",
  "stop@10s+5s, spike@30s+5s*2",
  "-strategies",
  "fixed,full-jitter",
  "-max-attempts",
  "4",
  "-retry-budget",
  "-error-rate",
  "0.05",
  "-interval",
  "2s",
  "-seed",
  "9",
  "-quiet",
];

function simValues(args: readonly string[]) {
  const parsed = parseFlags(SIM_PROGRAM, args);
  if (parsed.kind !== "run") throw new Error("help");
  return parsed.values as Record<string, unknown>;
}

/** The values a file can hold: every flag but the output flags; the fault schedule without the spaces between faults. */
const scenarioValues = (values: Record<string, unknown>) =>
  Object.fromEntries(
    SIM_FLAGS.filter((flag) => sectionOf(flag) !== undefined).map((flag) => {
      const value = values[flag.name];
      return [flag.name, flag.name === "faults" && typeof value === "string" ? value.replace(/,\s+/g, ",") : value];
    }),
  );

async function run(main: ProgramMain, argv: readonly string[]): Promise<{ code: number | void; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env: {} };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

describe("-print-scenario", () => {
  const dir = mkdtempSync(join(tmpdir(), "print-scenario-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes only what differs from the defaults, by section, in the flag table's order", async () => {
    const text = await printScenario(SIM_TARGET, simValues(SIM_ARGS));
    expect(text).toBe(
      [
        "scenario: 1",
        "system:",
        "  clients: 50",
        "  timeout: 1.5s",
        "  model: linear",
        "  slope: 10ms",
        "  error-rate: 0.05",
        "strategy:",
        "  max-attempts: 4",
        "protection:",
        "  retry-budget: true",
        "faults:",
        "  - stop@10s+5s",
        "  - spike@30s+5s*2",
        "observation:",
        "  interval: 2s",
        "run:",
        "  seed: 9",
        "  strategies: fixed,full-jitter",
        "",
      ].join("\n"),
    );
    expect(await printScenario(SIM_TARGET, simValues([]))).toBe("scenario: 1\n");
  });

  it("reads back as the same flags", async () => {
    const values = simValues(SIM_ARGS);
    const scenario = await parseScenario(await printScenario(SIM_TARGET, values), "printed.yaml", SIM_TARGET);
    expect(scenarioValues(simValues(scenario.tokens))).toEqual(scenarioValues(values));
  });

  it.each([
    ["sim", simMain, SIM_ARGS],
    ["choose", chooseMain, ["-clients", "200", "-model", "queue", "-threads", "8", "-seeds", "2", "-outages", "5s,30s", "-server-side"]],
    [
      "demo",
      demoMain,
      ["-strategies", "fixed,full-jitter", "-outage", "5s", "-server-args", "-backlog 64 -seed 3", "-client-args", "-clients 300 -seed 3"],
    ],
  ] as const)(
    "round-trips through %s: the file it prints, given back, prints the same, and a flag beside it wins",
    async (name, main, args) => {
      const first = await run(main as ProgramMain, [...args, "-print-scenario"]);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^scenario: 1\n/);
      expect(first.stdout.split("\n").length).toBeGreaterThan(4);
      const file = join(dir, `${name}.yaml`);
      writeFileSync(file, `name: from ${name}\n${first.stdout}`);
      const second = await run(main as ProgramMain, [file, "-print-scenario"]);
      expect(second.code).toBe(0);
      expect(second.stdout).toBe(first.stdout.replace("scenario: 1\n", `scenario: 1\nname: from ${name}\n`));
      const seed = name === "demo" ? ["-server-args", "-seed 11", "-client-args", "-seed 11"] : ["-seed", "11"];
      const overridden = await run(main as ProgramMain, [file, "-print-scenario", ...seed]);
      expect(overridden.stdout).toMatch(/^ {2}seed: 11$/m);
    },
  );
});
