import { describe, expect, it } from "vitest";
import { normalizeArgv, splitArguments } from "../../../src/cli/argv.ts";
import { argsToSettings, type FlagSpec, flagsInGroups, givenFlagNames, parseFlags } from "../../../src/cli/flags.ts";
import { describeFailure, FatalError, UsageError, wantsDebug } from "../../../src/cli/usage-error.ts";

const FLAGS = [
  { name: "clients", group: "system", kind: "integer", default: 1000, min: 1, description: "number of clients" },
  { name: "lambda", group: "system", kind: "number", default: 10, min: 0, minExclusive: true, description: "mean seconds" },
  { name: "timeout", group: "system", kind: "duration", default: 2000, minMs: 0, description: "timeout" },
  { name: "exponential-backoff", group: "strategy", kind: "boolean", default: false, description: "use backoff" },
  { name: "strategy", group: "strategy", kind: "string", default: "fixed", choices: ["fixed", "exponential"], description: "strategy" },
  { name: "seed", group: "run", kind: "integer", default: undefined, description: "seed" },
] as const satisfies readonly FlagSpec[];
const PROGRAM = { name: "client", summary: "test program", flags: FLAGS };

function run(args: string[]) {
  const outcome = parseFlags(PROGRAM, args);
  if (outcome.kind !== "run") throw new Error("expected values");
  return outcome.values;
}

function usageError(args: string[]): string {
  try {
    parseFlags(PROGRAM, args);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error("expected a UsageError");
}

describe("normalizeArgv", () => {
  it.each([
    [["-clients", "10"], ["--clients=10"]],
    [["-clients=10"], ["--clients=10"]],
    [["--clients", "10"], ["--clients=10"]],
    [["--clients=10"], ["--clients=10"]],
    [["-exponential-backoff"], ["--exponential-backoff=true"]],
    [["-exponential-backoff=false"], ["--exponential-backoff=false"]],
    [["-timeout", "-1s"], ["--timeout=-1s"]],
    [["-h"], ["--help"]],
    [["-help"], ["--help"]],
    [["--help"], ["--help"]],
    [["-clients", "5", "--"], ["--clients=5"]],
  ])("%j -> %j", (args, expected) => {
    expect(normalizeArgv(args, FLAGS)).toEqual(expected);
  });
});

describe("parseFlags", () => {
  it("gives every default when no flag is set", () => {
    expect(run([])).toEqual({
      clients: 1000,
      lambda: 10,
      timeout: 2000,
      "exponential-backoff": false,
      strategy: "fixed",
      seed: undefined,
    });
  });

  it("reads Go-style values of every kind", () => {
    expect(run(["-clients", "20", "-lambda=0.5", "--timeout", "1m30s", "-exponential-backoff", "-seed", "7"])).toEqual({
      clients: 20,
      lambda: 0.5,
      timeout: 90_000,
      "exponential-backoff": true,
      strategy: "fixed",
      seed: 7,
    });
    expect(run(["-exponential-backoff=false", "-strategy", "exponential"])).toMatchObject({
      "exponential-backoff": false,
      strategy: "exponential",
    });
  });

  it.each([
    [["-clients", "abc"], 'invalid value "abc" for flag -clients: must be an integer'],
    [["-clients", "0"], 'invalid value "0" for flag -clients: must be >= 1'],
    [["-clients", "1.5"], 'invalid value "1.5" for flag -clients: must be an integer'],
    [["-lambda", "0"], 'invalid value "0" for flag -lambda: must be > 0'],
    [["-lambda", "NaN"], 'invalid value "NaN" for flag -lambda: must be a finite number'],
    [["-lambda="], 'invalid value "" for flag -lambda: must be a finite number'],
    [["-timeout", "5"], 'invalid value "5" for flag -timeout: must be a duration such as 300ms, 1.5s, 2m or 1h2m3s'],
    [["-timeout", "-1s"], 'invalid value "-1s" for flag -timeout: must be >= 0s'],
    [["-exponential-backoff=maybe"], 'invalid value "maybe" for flag -exponential-backoff: must be true or false'],
    [["-strategy", "yolo"], 'invalid value "yolo" for flag -strategy: must be one of fixed, exponential'],
    [["-nope"], "flag provided but not defined: -nope"],
    [["--"], undefined],
    [["-clients"], "flag needs an argument: -clients"],
    [["stray"], 'unexpected argument "stray"'],
    [["-clients", "5", "--", "x"], 'unexpected argument "x"'],
  ])("%j is a usage error: %s", (args, message) => {
    if (message === undefined) {
      expect(run(args)).toMatchObject({ clients: 1000 });
      return;
    }
    expect(usageError(args)).toBe(message);
  });

  it("prints every flag with its default for -h, -help and --help", () => {
    for (const flag of ["-h", "-help", "--help"]) {
      const outcome = parseFlags(PROGRAM, ["-clients", "3", flag]);
      expect(outcome.kind).toBe("help");
      if (outcome.kind !== "help") continue;
      expect(outcome.text).toMatch(/-clients int\s+number of clients \(default: 1000\)/);
      expect(outcome.text).toMatch(/-timeout duration\s+timeout \(default: 2s\)/);
      expect(outcome.text).toMatch(/-exponential-backoff\s+use backoff \(default: false\)/);
      expect(outcome.text).toMatch(/-strategy string\s+strategy \(default: "fixed"\)/);
      expect(outcome.text).toContain("-h, -help");
    }
  });
});

describe("reading a table by group and an argument list as settings", () => {
  it("selects the flags of some groups, in the table's order", () => {
    expect(flagsInGroups(FLAGS, ["system"]).map((flag) => flag.name)).toEqual(["clients", "lambda", "timeout"]);
    expect(flagsInGroups(FLAGS, ["run", "strategy"]).map((flag) => flag.name)).toEqual(["exponential-backoff", "strategy", "seed"]);
  });

  it("reads Go-style arguments as values as typed, by the parser's own rules", () => {
    const args = ["-strategy", "exponential", "-exponential-backoff", "-clients=4", "--timeout", "1s", "-seed", "1", "-seed", "2"];
    expect(argsToSettings(args, FLAGS)).toEqual({
      strategy: "exponential",
      "exponential-backoff": "true",
      clients: "4",
      timeout: "1s",
      seed: "2",
    });
    expect(givenFlagNames([...args, "-h"], FLAGS)).toEqual(new Set(["strategy", "exponential-backoff", "clients", "timeout", "seed"]));
    expect(() => argsToSettings(["-nope", "1"], FLAGS)).toThrow("flag provided but not defined: -nope");
  });
});

describe("describeFailure", () => {
  it("turns a usage error into one line, a hint and exit 2", () => {
    expect(describeFailure("client", new UsageError("flag provided but not defined: -x"))).toEqual({
      text: "client: flag provided but not defined: -x\nRun 'client -h' for usage.\n",
      exitCode: 2,
    });
  });

  it("turns a fatal condition the program names into one line and exit 1", () => {
    const failure = describeFailure("server", new FatalError("listen 127.0.0.1:8070: address already in use"));
    expect(failure).toEqual({ text: "server: listen 127.0.0.1:8070: address already in use\n", exitCode: 1 });
  });

  it("says an unexpected error is one, in one line without a stack, and exit 1", () => {
    const failure = describeFailure("sim", new RangeError("Invalid array length"));
    expect(failure).toEqual({
      text: "sim: unexpected error: RangeError: Invalid array length (run with -debug for the stack)\n",
      exitCode: 1,
    });
  });

  it("adds the stack under -debug, and names where the error was caught", () => {
    const error = new TypeError("x is undefined");
    const failure = describeFailure("client", error, { debug: true, context: "uncaught exception" });
    expect(failure.text).toBe(`client: uncaught exception: TypeError: x is undefined\n${error.stack}\n`);
    expect(failure.exitCode).toBe(1);
  });
});

describe("wantsDebug", () => {
  it.each([
    [["-debug"], {}, true],
    [["--debug"], {}, true],
    [["-debug=true"], {}, true],
    [["-debug=false"], {}, false],
    [["-clients", "5"], {}, false],
    [[], { THUNDERING_HERD_DEBUG: "1" }, true],
    [[], { THUNDERING_HERD_DEBUG: "0" }, false],
  ] as const)("%j with %j -> %s", (argv, env, expected) => {
    expect(wantsDebug(argv, env)).toBe(expected);
  });
});

describe("arguments after the flags", () => {
  const program = { name: "merge", summary: "test", flags: FLAGS, arguments: "file…" };

  it.each([
    [["a", "b"], [], ["a", "b"]],
    [["-clients", "5", "a"], ["-clients", "5"], ["a"]],
    [["-exponential-backoff", "a", "-clients", "5"], ["-exponential-backoff"], ["a", "-clients", "5"]],
    [["-clients=5", "--", "-a"], ["-clients=5"], ["-a"]],
    [
      ["-clients", "5", "-", "b"],
      ["-clients", "5"],
      ["-", "b"],
    ],
  ])("splits %j as Go's flag package does", (args, flags, rest) => {
    expect(splitArguments(args, FLAGS)).toEqual({ flags, rest });
  });

  it("parses the flags and returns the arguments; help shows them", () => {
    const outcome = parseFlags(program, ["-clients", "5", "x.log", "y.log"]);
    expect(outcome).toMatchObject({ kind: "run", args: ["x.log", "y.log"] });
    if (outcome.kind === "run") expect(outcome.values.clients).toBe(5);
    const help = parseFlags(program, ["-h"]);
    expect(help.kind === "help" && help.text).toContain("Usage: merge [flags] file…");
    // A program without arguments still refuses them.
    expect(usageError(["x.log"])).toBe('unexpected argument "x.log"');
  });
});
