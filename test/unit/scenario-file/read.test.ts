import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseFlags } from "../../../src/cli/flags.ts";
import { describeFailure, InputFileError, UsageError } from "../../../src/cli/usage-error.ts";
import { main as chooseMain } from "../../../src/choose/main.ts";
import { CHOOSE_TARGET } from "../../../src/options/choose.ts";
import { main as demoMain } from "../../../src/demo/main.ts";
import { DEMO_TARGET } from "../../../src/options/demo.ts";
import { splitScenarioArgument, withScenarioFile } from "../../../src/scenario-file/arguments.ts";
import { SCENARIO_SECTIONS, sectionOf } from "../../../src/scenario-file/format.ts";
import type { ScenarioTarget } from "../../../src/options/scenario-target.ts";
import { parseScenario, readScenarioFile } from "../../../src/scenario-file/read.ts";
import { SCENARIO_TARGETS } from "../../../src/scenario-file/targets.ts";
import { main as simMain } from "../../../src/sim/main.ts";
import { OCC_SIM_PROGRAM, OCC_SIM_TARGET } from "../../../src/options/occ.ts";
import { SIM_FLAGS, SIM_PROGRAM, SIM_TARGET } from "../../../src/options/sim.ts";

const FILE = "exp.yaml";

/** The one line a program prints for a file's mistake, and its exit code. */
async function failure(text: string, target = SIM_TARGET): Promise<{ text: string; exitCode: number }> {
  try {
    await parseScenario(text, FILE, target);
  } catch (error) {
    expect(error).toBeInstanceOf(InputFileError);
    return describeFailure("sim", error);
  }
  throw new Error("the file was accepted");
}

const BROOKER = `scenario: 1
name: Brooker's collapse simulation
description: >
  Latency grows linearly with concurrency; a 5 s load spike tips it over.
source:
  title: "Fixing retries with token buckets and circuit breakers"
  url: https://brooker.co.za/blog/2022/02/28/retries.html
published: No backoff never recovers; backoff with jitter recovers.
system:
  model: linear
  baseDelay: 1s
  slope: 10ms
  arrivals: open
  rate: 40
  timeout: 3s
strategy:
  strategy: full-jitter
  max-attempts: 3
protection: {}
faults:
  - spike@60s+5s*2
  - stop@90s+2s
observation:
run:
  duration: 3m
  strategies: [fixed, full-jitter]
`;

describe("reading a scenario file", () => {
  it("turns the format's example into the flags the simulator parses, with its metadata", async () => {
    const scenario = await parseScenario(BROOKER, FILE, SIM_TARGET);
    expect(scenario.tokens).toEqual([
      "-timeout=3s",
      "-arrivals=open",
      "-rate=40",
      "-baseDelay=1s",
      "-model=linear",
      "-slope=10ms",
      "-strategy=full-jitter",
      "-max-attempts=3",
      "-faults=spike@60s+5s*2,stop@90s+2s",
      "-duration=3m",
      "-strategies=fixed,full-jitter",
    ]);
    expect(scenario.ignored).toEqual([]);
    expect(scenario.text).toBe(BROOKER);
    expect(scenario.metadata).toMatchObject({ name: "Brooker's collapse simulation", source: { url: expect.stringContaining("brooker") } });
    const parsed = parseFlags(SIM_PROGRAM, scenario.tokens);
    expect(parsed.kind === "run" && parsed.values).toMatchObject({ model: "linear", slope: 10, rate: 40, duration: 180_000 });
  });

  it("passes over, and names, the keys only another program takes; the demo gets server and client flags through -server-args and -client-args", async () => {
    const choose = await parseScenario(BROOKER, FILE, CHOOSE_TARGET);
    expect(choose.ignored).toEqual(["strategy.strategy", "strategy.max-attempts", "run.duration", "run.strategies"]);
    expect(choose.tokens).toContain("-model=linear");
    const demo = await parseScenario(`${BROOKER.replace("run:\n", "run:\n  seed: 4\n")}`, FILE, DEMO_TARGET);
    expect(demo.tokens).toEqual(["-faults=spike@60s+5s*2,stop@90s+2s", "-strategies=fixed,full-jitter"]);
    expect(demo.passThrough["server-args"]).toEqual(["-baseDelay=1s", "-model=linear", "-slope=10ms", "-seed=4"]);
    expect(demo.passThrough["client-args"]).toEqual(["-timeout=3s", "-arrivals=open", "-rate=40", "-max-attempts=3", "-seed=4"]);
  });

  it.each([
    [
      "an unknown key",
      "scenario: 1\nsystem:\n  rate: 4\n  bogus: 3\n",
      "exp.yaml:4: bogus: unknown key in section system: not a flag of any program",
    ],
    [
      "a misspelt key",
      "scenario: 1\nsystem:\n  rat: 3\n",
      "exp.yaml:3: rat: unknown key in section system: not a flag of any program; did you mean rate?",
    ],
    [
      "a key in the wrong section",
      "scenario: 1\nstrategy:\n  max-attempts: 2\n  rate: 40\n",
      "exp.yaml:4: rate: belongs in section system, not strategy",
    ],
    ["a flag outside any section", "name: x\nscenario: 1\nrate: 3\n", "exp.yaml:3: rate: a flag: it belongs in section system"],
    [
      "an output flag",
      "scenario: 1\nrun:\n  json: true\n",
      "exp.yaml:3: json: an output flag: give it on the command line, not in a scenario file",
    ],
    [
      "the demo's -server-args",
      "scenario: 1\nrun:\n  server-args: -backlog 64\n",
      "exp.yaml:3: server-args: write the flags it carries in their own sections, e.g. system: backlog: 64",
    ],
    ["an unknown top-level key", "scenario: 1\nsytem: {}\n", "exp.yaml:2: sytem: unknown key; did you mean system?"],
    ["an unknown source key", "scenario: 1\nsource:\n  author: me\n", "exp.yaml:3: author: unknown key; source has title, url, date"],
    ["a value the flag refuses", "scenario: 1\nsystem:\n  rate: -4\n", 'exp.yaml:3: rate: invalid value "-4": must be > 0'],
    ["a number of the wrong type", "scenario: 1\nsystem:\n  rate: fast\n", "exp.yaml:3: rate: must be a number"],
    ["a float for an integer", "scenario: 1\nsystem:\n  clients: 2.5\n", 'exp.yaml:3: clients: invalid value "2.5": must be an integer'],
    [
      "a duration without its unit",
      "scenario: 1\nsystem:\n  timeout: 20\n",
      'exp.yaml:3: timeout: invalid value "20": must be a duration such as 300ms, 1.5s, 2m or 1h2m3s',
    ],
    [
      "a boolean that is not one",
      "scenario: 1\nstrategy:\n  exponential-backoff: yes\n",
      "exp.yaml:3: exponential-backoff: must be true or false",
    ],
    ["a choice not offered", "scenario: 1\nsystem:\n  model: cubic\n", 'exp.yaml:3: model: invalid value "cubic": must be one of'],
    [
      "a bad fault, on its own line",
      "scenario: 1\nfaults:\n  - stop@1s+2s\n  - boom@3s\n",
      'exp.yaml:4: faults: invalid value "boom@3s": "boom@3s" is not kind@start+length[*factor]',
    ],
    ["a section that is not a mapping", "scenario: 1\nsystem: fast\n", "exp.yaml:2: system: must be a mapping of flag names to values"],
    ["a source that is not a mapping", "scenario: 1\nsource: x\n", "exp.yaml:2: source: must be a mapping: title, url, date"],
    ["a source URL that is none", "scenario: 1\nsource:\n  url: nope\n", "exp.yaml:3: url: must be a URL"],
    ["bad YAML", "scenario: 1\nsystem: [\n", "exp.yaml:3: YAML: "],
    ["a key given twice", "scenario: 1\nsystem:\n  rate: 3\n  rate: 4\n", "exp.yaml:4: YAML: Map keys must be unique"],
    ["a missing scenario", "name: x\nsystem:\n  rate: 4\n", "exp.yaml:1: scenario: missing: a scenario file names its format, scenario: 1"],
    ["another format version", "scenario: 2\n", "exp.yaml:1: scenario: must be 1, the format version"],
    ["an empty file", "# nothing\n", "exp.yaml:1: scenario: missing: the file is empty"],
    ["a list, not a mapping", "- scenario: 1\n", "exp.yaml:1: scenario: a scenario file is a mapping of keys, starting with scenario: 1"],
  ])("refuses %s in one line naming the file, the line and the key, exit 2", async (_what, text, message) => {
    const { text: printed, exitCode } = await failure(text);
    expect(exitCode).toBe(2);
    expect(printed.endsWith("\n") && printed.split("\n")).toHaveLength(2);
    expect(printed.startsWith(message)).toBe(true);
  });

  it("names the first mistake in the file, whatever the order of the sections", async () => {
    expect((await failure("scenario: 1\nrun:\n  seed: -1\nsystem:\n  rate: 0\n")).text).toMatch(/^exp\.yaml:3: seed:/);
  });

  it("refuses a value with spaces that the demo would pass to another program", async () => {
    const { text } = await failure("scenario: 1\nstrategy:\n  table: 1s, 2s\n", DEMO_TARGET);
    expect(text).toBe("exp.yaml:3: table: must not contain spaces: it is passed to another program in -client-args\n");
    // The simulator takes it as it is.
    expect((await parseScenario("scenario: 1\nstrategy:\n  table: 1s, 2s\n", FILE, SIM_TARGET)).tokens).toEqual(["-table=1s, 2s"]);
  });

  it("says which file it could not read", async () => {
    const error = await readScenarioFile("/nonexistent/x.yaml", SIM_TARGET).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as Error).message).toBe("/nonexistent/x.yaml: cannot read the scenario file: no such file");
  });
});

describe("docs/scenario-files.md", () => {
  it("shows a format example that the simulator reads, and error lines the reader writes", async () => {
    const doc = readFileSync(join(import.meta.dirname, "../../../docs/scenario-files.md"), "utf8");
    const example = /```yaml\n([\s\S]*?)```/.exec(doc)![1]!;
    const scenario = await parseScenario(example, FILE, SIM_TARGET);
    expect(scenario.tokens).toContain("-faults=spike@60s+5s*2");
    expect(scenario.metadata.source?.url).toBe("https://brooker.co.za/blog/2022/02/28/retries.html");
    for (const [, message] of (await failure("scenario: 1\nsystem:\n  rat: 3\n")).text.matchAll(/^exp\.yaml:\d+: (.*)$/gm)) {
      expect(doc).toContain(message);
    }
  });
});

describe("the file among the arguments", () => {
  const dir = mkdtempSync(join(tmpdir(), "scenario-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is the argument that is neither a flag nor a flag's value, before or after the flags", () => {
    expect(splitScenarioArgument(["f.yaml", "-seed", "3"], SIM_FLAGS)).toEqual({ file: "f.yaml", rest: ["-seed", "3"] });
    expect(splitScenarioArgument(["-seed", "3", "-quiet", "f.yaml"], SIM_FLAGS)).toEqual({
      file: "f.yaml",
      rest: ["-seed", "3", "-quiet"],
    });
    expect(splitScenarioArgument(["-seed=3"], SIM_FLAGS)).toEqual({ file: undefined, rest: ["-seed=3"] });
    // An unknown flag is left to the flag parser, with what follows it: it may be its value.
    expect(splitScenarioArgument(["f.yaml", "-nope", "3"], SIM_FLAGS)).toEqual({ file: "f.yaml", rest: ["-nope", "3"] });
    expect(() => splitScenarioArgument(["a.yaml", "b.yaml"], SIM_FLAGS)).toThrow(
      'unexpected argument "b.yaml": give one scenario file at most',
    );
  });

  it("puts the file's flags first, so that a flag beside it wins", async () => {
    const path = join(dir, "seeded.yaml");
    writeFileSync(path, "scenario: 1\nrun:\n  seed: 7\n  duration: 30s\n");
    const notes: string[] = [];
    const { argv, scenario } = await withScenarioFile([path, "-seed", "3"], SIM_TARGET, { write: (text: string) => notes.push(text) });
    expect(argv).toEqual(["-duration=30s", "-seed=7", "-seed", "3"]);
    expect(scenario?.file).toBe(path);
    const parsed = parseFlags(SIM_PROGRAM, argv);
    expect(parsed.kind === "run" && parsed.values).toMatchObject({ seed: 3, duration: 30_000 });
    expect(notes).toEqual([]);
    const choose = await withScenarioFile([path], CHOOSE_TARGET, { write: (text: string) => notes.push(text) });
    expect(choose.argv).toEqual(["-seed=7"]);
    expect(notes).toEqual([`choose: ${path}: ignoring run.duration: not flags of choose\n`]);
  });

  it("leaves the arguments alone when there is no file", async () => {
    expect(await withScenarioFile(["-seed", "3"], SIM_TARGET, { write: () => {} })).toEqual({ argv: ["-seed", "3"], scenario: undefined });
  });
});

describe("the sections", () => {
  it("give every flag one section, the same in every program that takes it", () => {
    const homes = new Map<string, string>();
    for (const target of SCENARIO_TARGETS) {
      for (const flag of [...target.flags, ...(target.passThrough ?? []).flatMap((pass) => pass.flags)]) {
        const section = sectionOf(flag);
        if (section === undefined) continue;
        expect(SCENARIO_SECTIONS).toContain(section);
        expect(homes.get(flag.name) ?? section, `${target.program} -${flag.name}`).toBe(section);
        homes.set(flag.name, section);
      }
    }
    expect(homes.get("faults")).toBe("faults");
    expect(homes.get("rate")).toBe("system");
  });
});

describe("the workload key", () => {
  const SIM_WORKLOADS = [SIM_TARGET, OCC_SIM_TARGET];
  const OCC =
    "scenario: 1\nworkload: occ\nsystem:\n  clients: 20\n  net-delay: 10ms\nstrategy:\n  base: 5ms\nrun:\n  strategies: none,full-jitter\n  trials: 3\n";

  async function occFailure(text: string, targets: readonly ScenarioTarget[] = SIM_WORKLOADS): Promise<string> {
    const error = await parseScenario(text, FILE, targets).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputFileError);
    const { text: printed, exitCode } = describeFailure("sim", error);
    expect(exitCode).toBe(2);
    expect(printed.split("\n")).toHaveLength(2);
    return printed.trimEnd();
  }

  it("reads a file of workload occ against the occ flag table, into flags that parse", async () => {
    const scenario = await parseScenario(OCC, FILE, SIM_WORKLOADS);
    expect(scenario.workload).toBe("occ");
    expect(scenario.tokens).toEqual(["-clients=20", "-net-delay=10ms", "-base=5ms", "-strategies=none,full-jitter", "-trials=3"]);
    expect(scenario.ignored).toEqual([]);
    const parsed = parseFlags(OCC_SIM_PROGRAM, scenario.tokens);
    expect(parsed.kind === "run" && [parsed.values.clients, parsed.values.base, parsed.values.trials]).toEqual([20, 5, 3]);
    // Without the key, a file is of workload requests.
    expect((await parseScenario("scenario: 1\nsystem:\n  rate: 4\n", FILE, SIM_WORKLOADS)).workload).toBe("requests");
  });

  it.each([
    ["a workload that is none", "scenario: 1\nworkload: batch\n", "exp.yaml:2: workload: must be one of requests, occ"],
    [
      "an occ flag in a file of workload requests",
      "scenario: 1\nsystem:\n  rate: 4\n  net-delay: 10ms\n",
      "exp.yaml:4: net-delay: a flag of workload occ: a file of that workload says workload: occ at the top",
    ],
    [
      "a requests flag in a file of workload occ",
      "scenario: 1\nworkload: occ\nsystem:\n  clients: 20\n  rate: 4\n",
      "exp.yaml:5: rate: a flag of workload requests, not of workload occ that this file names",
    ],
    [
      "the workload inside a section",
      "scenario: 1\nrun:\n  workload: occ\n",
      "exp.yaml:3: workload: a top-level key, not a section's: workload: occ at the start of the file",
    ],
    [
      "a chain of tiers in a file of workload occ, which would run without it",
      "scenario: 1\nworkload: occ\ntiers:\n  - name: edge\n  - name: db\n",
      "exp.yaml:3: tiers: workload occ has no chain of tiers; a chain is a scenario of workload requests",
    ],
  ])("refuses %s in one line", async (_what, text, message) => {
    expect(await occFailure(text)).toBe(message);
  });

  it("refuses a file of workload occ in a program that does not run it", async () => {
    expect(await occFailure(OCC, [DEMO_TARGET])).toBe("exp.yaml:2: workload: demo does not run workload occ; ./sim does");
  });

  it("runs ./sim FILE in the file's workload, and refuses a -workload beside it that disagrees", async () => {
    const dir = mkdtempSync(join(tmpdir(), "workload-"));
    try {
      const file = join(dir, "occ.yaml");
      writeFileSync(file, OCC);
      let stdout = "";
      let stderr = "";
      const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env: {} };
      expect(await simMain([file, "-json"], io)).toBe(0);
      const lines = stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { workload: string; strategy: string; clients: number });
      expect(lines.map((line) => [line.workload, line.strategy, line.clients])).toEqual([
        ["occ", "none", 20],
        ["occ", "full-jitter", 20],
      ]);
      expect(stderr).toMatch(/^sim: workload occ: 20 clients/);
      await expect(simMain(["-workload", "requests", file], io)).rejects.toThrow(
        `-workload requests given, but ${file} is a scenario of workload occ`,
      );
      expect(await simMain(["-workload", "occ", file, "-clients", "5", "-strategies", "none", "-trials", "1"], io)).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a hostile file (issue 39)", () => {
  /** The one line printed for `text`, checked to be one line of printable characters with exit 2. */
  async function oneLine(text: string): Promise<string> {
    const { text: printed, exitCode } = await failure(text);
    expect(exitCode).toBe(2);
    expect(printed.split("\n")).toEqual([printed.trimEnd(), ""]);
    expect(printed.trimEnd()).toMatch(/^[\x20-\x7e\u00a0-\uffff]*$/);
    return printed.trimEnd();
  }

  it("refuses an alias bomb as a mistake in the file, not an unexpected error", async () => {
    // Each level nine times the one before: 9^7 strings from a few hundred bytes.
    const names = "abcdefg";
    const levels = [...names].map(
      (name, index) =>
        `${name}: &${name} [${Array(9)
          .fill(index === 0 ? "x" : `*${names[index - 1]}`)
          .join(", ")}]`,
    );
    expect(await oneLine(`scenario: 1\n${levels.join("\n")}\n`)).toMatch(/^exp\.yaml:3: YAML: too many aliases/);
  });

  it("refuses an alias of no anchor (found by the fuzz test) as a mistake in the file", async () => {
    expect(await oneLine("scenario: 1\n: *a\n")).toBe("exp.yaml:2: YAML: Unresolved alias (the anchor must be set before the alias): a");
  });

  it.each([
    ["100 000 [", `scenario: 1\nsystem: ${"[".repeat(100_000)}\n`],
    ["2 000 [", `scenario: 1\nsystem: ${"[".repeat(2_000)}${"]".repeat(2_000)}\n`],
    ["2 000 nested mappings", `scenario: 1\nsystem: ${"{a: ".repeat(2_000)}1${"}".repeat(2_000)}\n`],
  ])("refuses nesting %s deep as too deep, not a stack overflow", async (_what, text) => {
    expect(await oneLine(text)).toMatch(/^exp\.yaml:2: YAML: nested deeper than \d+ levels/);
  });

  it("escapes control bytes of the file in its message", async () => {
    expect(await oneLine("scenario: 1\nsystem:\n  cl\u0000ie\u001bnts\u0007: 5\n")).toBe(
      "exp.yaml:3: cl\\x00ie\\x1bnts\\x07: unknown key in section system: not a flag of any program",
    );
    expect(await oneLine('scenario: 1\nsystem:\n  model: "a\\u202eb\\r\\n"\n')).toMatch(
      /^exp\.yaml:3: model: invalid value "a\\u\{202e\}b\\x0d\\x0a"/,
    );
  });

  it("quotes a 900 KB key or value as an excerpt, and looks for no near key to suggest", async () => {
    const long = "k".repeat(900_000);
    expect(await oneLine(`scenario: 1\nsystem: {"${long}": 1}\n`)).toBe(
      `exp.yaml:2: ${"k".repeat(64)}… (899936 more characters): unknown key in section system: not a flag of any program`,
    );
    expect(await oneLine(`scenario: 1\nsystem:\n  model: ${long}\n`)).toMatch(
      /^exp\.yaml:3: model: invalid value "k{64}… \(899936 more characters\)": must be one of/,
    );
  });

  it("names the file's line for a run too long to report, not another flag", async () => {
    expect(await oneLine("scenario: 1\nrun:\n  duration: 99999999999h\n")).toBe(
      'exp.yaml:3: duration: invalid value "99999999999h": must be <= 2777h46m40s',
    );
  });

  it.each([
    ["clients: 100000000000000000000000", "100000000000000000000000"],
    ["rate: 1e999", "1e999"],
    ["clients: 0o7777777777777777777777", "0o7777777777777777777777"],
    // Its E digits once made it read as a float, silently rounded to 18446744073709552000.
    ["clients: 0xFFFFFFFFFFFFFFFE", "0xFFFFFFFFFFFFFFFE"],
  ])("says %s is out of range, in the file's own spelling", async (line, spelling) => {
    expect(await oneLine(`scenario: 1\nsystem:\n  ${line}\n`)).toMatch(
      new RegExp(`^exp\\.yaml:3: \\w+: invalid value "${spelling}": out of range`),
    );
  });

  it("reads 20 000 unknown keys in one pass and names the first, with how many more", async () => {
    const keys = Array.from({ length: 20_000 }, (_, index) => `key${index}: 1\n`).join("");
    expect(await oneLine(`scenario: 1\n${keys}`)).toBe("exp.yaml:2: key0: unknown key; and 19999 more unknown keys");
    const twice = `scenario: 1\n${keys}${keys}`;
    expect(await oneLine(twice)).toBe("exp.yaml:20002: YAML: Map keys must be unique");
  });

  it("refuses more faults than the schedule's limit on the first one past it", async () => {
    const faults = Array.from({ length: 1001 }, (_, index) => `  - slow@${index}ms+1s*2\n`).join("");
    expect(await oneLine(`scenario: 1\nfaults:\n${faults}`)).toBe(
      "exp.yaml:1003: faults: more than 1000 faults; a schedule lists at most 1000",
    );
  });

  it.runIf(existsSync("/dev/zero"))("reads an endless file up to 1 MiB and no further", async () => {
    // Before the limit it read /dev/zero to about 700 MB and failed with "RangeError: Invalid string length".
    const error = await readScenarioFile("/dev/zero", SIM_TARGET).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as Error).message).toBe("/dev/zero:1: the file goes on past 1 MiB here; a scenario file is a few KB");
  });

  it("refuses a file over 1 MiB before parsing it, naming the line where it passes the limit", async () => {
    const padding = `# ${"x".repeat(1000)}\n`.repeat(2_000);
    const text = `scenario: 1\n${padding}`;
    expect(await oneLine(text)).toBe("exp.yaml:1047: the file goes on past 1 MiB here; a scenario file is a few KB");
    const dir = mkdtempSync(join(tmpdir(), "big-scenario-"));
    try {
      const path = join(dir, "big.yaml");
      writeFileSync(path, text);
      const error = await readScenarioFile(path, SIM_TARGET).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InputFileError);
      expect((error as Error).message).toBe(`${path}:1047: the file goes on past 1 MiB here; a scenario file is a few KB`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a file's flags checked together (issue 39)", () => {
  const CHAIN_CRASH = readFileSync("examples/three-tiers.yaml", "utf8").replace("duration: 50s", "duration: 20s");
  it.each([
    [
      "a spike past the simulator's clients",
      "scenario: 1\nsystem:\n  clients: 1000\nfaults:\n  - spike@1s+1s*1e308\n",
      [],
      "exp.yaml:4: faults: the spike spike@1s+1s*1e+308 runs 1e+308 times the 1000 clients; at most 10000000 clients in all",
    ],
    [
      "an open loop's spike past its arrivals per second",
      "scenario: 1\nsystem:\n  arrivals: open\n  rate: 100\nfaults:\n  - spike@1s+1s*1e308\n",
      [],
      "exp.yaml:5: faults: the spike spike@1s+1s*1e+308 runs 1e+308 times the 100 arrivals per second; at most 1000000 arrivals per second in all",
    ],
    [
      "a chain's fault that the run does not see end",
      CHAIN_CRASH,
      [],
      "exp.yaml:30: faults: the run ends at 20s, before db:crash@15s+15s ends: nothing to judge",
    ],
    [
      "the same fault, its run's length from the command line",
      CHAIN_CRASH,
      ["-duration", "25s"],
      /^exp\.yaml:30: faults: the run ends at 25s/,
    ],
  ])("names the file's line for %s", async (_what, text, extra, message) => {
    const dir = mkdtempSync(join(tmpdir(), "checked-together-"));
    try {
      const file = join(dir, FILE);
      writeFileSync(file, text);
      let stdout = "";
      const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => true }, env: {} };
      const error = await simMain([file, ...extra], io).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InputFileError);
      const line = describeFailure("sim", error).text;
      expect(line.replace(`${dir}/`, "").trimEnd()).toMatch(message);
      expect(stdout).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ["choose", chooseMain],
    ["demo", demoMain],
  ] as const)("names the file's line for a spike past the clients in %s too", async (program, programMain) => {
    const dir = mkdtempSync(join(tmpdir(), "checked-together-"));
    try {
      const file = join(dir, FILE);
      writeFileSync(file, "scenario: 1\nsystem:\n  clients: 1000\nfaults:\n  - spike@1s+1s*1e308\n");
      const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: {} };
      const error = await programMain([file], io as never).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InputFileError);
      expect(describeFailure(program, error).text.replace(`${dir}/`, "").trimEnd()).toBe(
        "exp.yaml:4: faults: the spike spike@1s+1s*1e+308 runs 1e+308 times the 1000 clients; at most 10000000 clients in all",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leaves a fault given on the command line the command line's mistake", async () => {
    const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: {} };
    await expect(simMain(["-faults", "db:crash@40s+20s", "examples/three-tiers.yaml"], io)).rejects.toThrow(
      new UsageError("-faults: the run ends at 50s, before db:crash@40s+20s ends: nothing to judge"),
    );
  });
});
