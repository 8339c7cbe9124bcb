import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InputFileError, UsageError } from "../../../src/cli/usage-error.ts";
import { parseScenario } from "../../../src/scenario-file/read.ts";
import { chainConfigFrom } from "../../../src/scenario-file/chain-config.ts";
import type { Fault } from "../../../src/model/faults/fault-schedule.ts";
import { MAX_ARRIVAL_RATE } from "../../../src/model/load.ts";
import { configFrom, parseSimArgs, SIM_TARGET } from "../../../src/options/sim.ts";
import { MAX_CLIENTS, MAX_DURATION_MS } from "../../../src/config/simulation.ts";
import type { SimulationConfig } from "../../../src/config/simulation-config.ts";
import { FUZZ, oneLinePrintable } from "../../helpers/fuzz.ts";

/*
 * The scenario-file reader under hostile input (issue 39): YAML-ish text from the format's own
 * tokens, random bytes, and well-formed files with extreme numbers and sizes. Each is read, or
 * refused with the reader's error: one printable line that names the file and the line. What
 * it reads then parses as ./sim's flags into the run it means (a chain as ./sim's chain), within
 * the limits the programs document, or is refused as a usage error of one printable line. No
 * other exception; a hang is bounded by the test's timeout. FUZZ_RUNS and FUZZ_SEED (test/helpers/fuzz.ts) scale it up and replay it.
 */

const FILE = "fuzz.yaml";

/** Reads `text` as ./sim would, through to its options; fails the property on anything but the expected errors. */
async function readsOrRefuses(text: string): Promise<void> {
  let scenario;
  try {
    scenario = await parseScenario(text, FILE, SIM_TARGET);
  } catch (error) {
    if (!(error instanceof InputFileError)) throw error;
    expect(error.message).toMatch(/^fuzz\.yaml:\d+: /);
    oneLinePrintable(error.message);
    return;
  }
  let run: Runnable;
  try {
    const parsed = parseSimArgs(scenario.tokens);
    if (parsed.kind !== "run") return;
    run = scenario.tiers === undefined ? configFrom(parsed.values) : chainConfigFrom(parsed.values, scenario.tiers);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    oneLinePrintable(error.message);
    return;
  }
  withinLimits(run);
}

type Runnable = Pick<SimulationConfig, "users" | "arrivals" | "durationMs"> & {
  readonly faults?: readonly Fault[] | undefined;
  readonly spikes?: readonly Fault[] | undefined;
  readonly tiers?: readonly { readonly fanout: number }[];
};

/** What is accepted is within the limits the programs document: nothing too large passes as if it were fine. */
function withinLimits(run: Runnable): void {
  expect(run.users).toBeLessThanOrEqual(MAX_CLIENTS);
  expect(run.durationMs).toBeLessThanOrEqual(MAX_DURATION_MS);
  for (const fault of [...(run.faults ?? []), ...(run.spikes ?? [])]) {
    expect([fault.atMs, fault.durationMs, fault.factor].every(Number.isFinite)).toBe(true);
    if (fault.kind !== "spike") continue;
    const load = run.arrivals?.kind === "open" ? run.arrivals.ratePerSec * fault.factor : run.users * fault.factor;
    expect(load).toBeLessThanOrEqual(run.arrivals?.kind === "open" ? MAX_ARRIVAL_RATE : MAX_CLIENTS);
  }
  if (run.arrivals?.kind === "open") expect(run.arrivals.ratePerSec).toBeLessThanOrEqual(MAX_ARRIVAL_RATE);
  expect(run.tiers?.length ?? 0).toBeLessThanOrEqual(64);
  for (const tier of run.tiers ?? []) expect(tier.fanout).toBeLessThanOrEqual(64);
}

const NUMBERS = [
  ...["0", "-0", "1", "-1", "64", "65", "1000000", "10000001", "9007199254740991", "9007199254740993", "100000000000000000000000"],
  ...["1e308", "1e309", "-1e999", "1e-400", "0x1fffffffffffff1", "0o777777777777777777777", ".inf", "-.inf", ".nan", "1_000"],
];
const WORDS = [
  ...["scenario", "name", "system", "strategy", "protection", "faults", "observation", "run", "tiers", "source", "workload"],
  ...["clients", "lambda", "timeout", "rate", "arrivals", "model", "threads", "fanout", "upstream", "duration", "seed", "max-attempts"],
];
const SYNTAX = [
  ...[": ", ":", "\n", "\n  ", "\n    ", "- ", "[", "]", "{", "}", ", ", "&a ", "*a", "<<: ", "!!str ", "!!int ", "!!binary "],
  ...["? ", "|", ">", "'", '"', "#", "---\n", "...\n", "%YAML 1.2\n", "\t", "\u0000", "\u001b", "\ufeff", "\u202e", "\ud800"],
];

/** Text from the format's tokens, with garbage between them. */
const yamlish = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...SYNTAX) },
      { weight: 2, arbitrary: fc.constantFrom(...WORDS) },
      { weight: 2, arbitrary: fc.constantFrom(...NUMBERS) },
      { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 5 }) },
    ),
    { maxLength: 80 },
  )
  .map((parts) => `scenario: 1\n${parts.join("")}`);

/** Random bytes, as the reader decodes a file's. */
const bytes = fc
  .tuple(fc.boolean(), fc.uint8Array({ maxLength: 400 }))
  .map(([header, data]) => `${header ? "scenario: 1\n" : ""}${Buffer.from(data).toString("utf8")}`);

const number = fc.oneof(
  fc.constantFrom(...NUMBERS),
  fc.double().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
);

/** A fault's start or length: any number, or a few seconds, so that a fault often reads and its factor is what is tried. */
const time = fc.oneof(number, fc.nat(20).map(String));

/**
 * A well-formed file whose values are extreme: numbers anywhere a value goes, chains short or at
 * the limit of 64 tiers with any fan-out, faults with any numbers.
 */
const extreme = fc
  .record({
    system: fc.dictionary(fc.constantFrom("clients", "lambda", "timeout", "rate", "limit", "threads", "backlog"), number, { maxKeys: 4 }),
    // Open loops too: a spike of theirs once went unchecked and ran ./sim for ever.
    open: fc.option(fc.oneof(number, fc.constantFrom("1", "100", "1000")), { nil: undefined }),
    run: fc.dictionary(
      fc.constantFrom("duration", "seed", "interval"),
      fc.oneof(
        number,
        number.map((value) => `${value}h`),
      ),
      { maxKeys: 2 },
    ),
    faults: fc.array(fc.tuple(fc.constantFrom("stop", "crash", "slow", "spike", "capacity", "errors"), time, time, number), {
      maxLength: 4,
    }),
    tiers: fc.option(
      fc.tuple(
        fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 4 }) }, { weight: 1, arbitrary: fc.constantFrom(64, 65) }),
        number,
      ),
      { nil: undefined },
    ),
  })
  .map(({ system: flags, open, run, faults, tiers }) => {
    const system = open === undefined ? flags : { ...flags, arrivals: "open", rate: open };
    const section = (name: string, values: Record<string, string>) =>
      `${name}:\n${Object.entries(values)
        .map(([key, value]) => `  ${key}: ${value}\n`)
        .join("")}`;
    const schedule = faults.map(([kind, at, length, factor]) => `  - "${kind}@${at}s+${length}s*${factor}"\n`).join("");
    const chain =
      tiers === undefined
        ? ""
        : `tiers:\n${Array.from({ length: tiers[0] }, (_, index) => `  - name: t${index}\n    system: {model: queue}\n${index < tiers[0] - 1 ? `    fanout: ${tiers[1]}\n` : ""}`).join("")}`;
    const users =
      tiers === undefined
        ? system
        : Object.fromEntries(Object.entries(system).filter(([key]) => ["clients", "lambda", "arrivals", "rate"].includes(key)));
    return `scenario: 1\n${section("system", users)}${section("run", run)}${schedule === "" ? "" : `faults:\n${schedule}`}${chain}`;
  });

describe("the scenario-file reader, fuzzed", () => {
  it.each([
    ["YAML-ish text from the format's tokens", yamlish],
    ["random bytes", bytes],
    ["well-formed files with extreme values and sizes", extreme],
  ])("reads %s or refuses it in one printable line naming the file and line", async (_what, texts) => {
    await fc.assert(fc.asyncProperty(texts, readsOrRefuses), FUZZ);
  });
});
