import { type FlagSpec, givenFlagNames } from "../cli/flags.ts";
import { InputFileError, UsageError } from "../cli/usage-error.ts";
import { DEMO_CHAIN_KEYS } from "./tiers.ts";
import type { LoadedScenario } from "./format.ts";
import { type ScenarioTarget, workloadOf } from "../options/scenario-target.ts";

/**
 * The scenario file among a program's arguments: the one argument that is neither a flag nor
 * a flag's value, wherever it stands (`./sim FILE -seed 3`, `./sim -seed 3 FILE`).
 */
export function splitScenarioArgument(argv: readonly string[], flags: readonly FlagSpec[]): { file: string | undefined; rest: string[] } {
  const takesValue = new Set(flags.filter((flag) => flag.kind !== "boolean").map((flag) => flag.name));
  const known = new Set([...flags.map((flag) => flag.name), "h", "help"]);
  const rest: string[] = [];
  const files: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === "--") {
      files.push(...argv.slice(index + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      files.push(arg);
      continue;
    }
    const name = arg.replace(/^--?/, "").replace(/=.*/, "");
    if (!known.has(name)) {
      // The flag parser refuses it; what follows cannot be told apart from its value.
      rest.push(...argv.slice(index));
      break;
    }
    rest.push(arg);
    if (takesValue.has(name) && !arg.includes("=") && index + 1 < argv.length) rest.push(argv[++index]!);
  }
  if (files.length > 1) throw new UsageError(`unexpected argument "${files[1]}": give one scenario file at most`);
  return { file: files[0], rest };
}

/** The programs that run a file's chain of tiers (tiers:) as a chain. */
const CHAIN_PROGRAMS: ReadonlySet<string> = new Set(["sim", "demo", "choose"]);
/** Those that read a chain's file as ./sim does (its strategy: and run: included) and name what they leave out themselves. */
const CHAIN_READ_AS_SIM: ReadonlySet<string> = new Set(["choose"]);

/** What a program runs with: the file's flags before the command line's own, and the file itself. */
export interface ScenarioArguments {
  readonly argv: readonly string[];
  readonly scenario: LoadedScenario | undefined;
}

/**
 * A program's arguments with its scenario file, if one is given, read and turned into flags
 * that come first, so that a flag given beside the file wins. The reader (YAML parser and
 * validator) is loaded only when there is a file. A key that only another program takes is
 * named on stderr. A program that runs more than one workload gives its target for each; the
 * file's workload picks one (scenario.workload).
 */
export async function withScenarioFile(
  argv: readonly string[],
  targets: ScenarioTarget | readonly ScenarioTarget[],
  stderr: { write(text: string): unknown },
): Promise<ScenarioArguments> {
  const list: readonly ScenarioTarget[] = Array.isArray(targets) ? targets : [targets as ScenarioTarget];
  const { file, rest } = splitScenarioArgument(
    argv,
    list.flatMap((target) => target.flags),
  );
  if (file === undefined) return { argv: rest, scenario: undefined };
  const { readScenarioFile } = await import("./read.ts");
  const scenario = await readScenarioFile(file, list);
  const target = list.find((candidate) => workloadOf(candidate) === scenario.workload)!;
  // Only these run a chain: another program would quietly run one server.
  if (scenario.tiers !== undefined && !CHAIN_PROGRAMS.has(target.program)) {
    throw new UsageError(`${file}: ${target.program} does not run a chain of tiers (tiers:); ./sim, npm run demo and choose do`);
  }
  const ignored =
    scenario.tiers === undefined
      ? scenario.ignored
      : CHAIN_READ_AS_SIM.has(target.program)
        ? []
        : target.program === "demo"
          ? scenario.ignored.filter((key) => !DEMO_CHAIN_KEYS.includes(key))
          : scenario.ignored;
  if (ignored.length > 0) {
    stderr.write(`${target.program}: ${file}: ignoring ${ignored.join(", ")}: not flags of ${target.program}\n`);
  }
  return { argv: [...scenario.tokens, ...rest], scenario };
}

/**
 * Runs a program's checks of its flags together; a UsageError they raise about one flag
 * (`-faults: …`) whose value the file gave, not the command line, is the file's mistake on that
 * key's line: `FILE:LINE: faults: …`, as the reader reports a value it refuses alone.
 */
export async function blamingScenarioFile<T>(
  scenario: LoadedScenario | undefined,
  commandLine: readonly string[],
  flags: readonly FlagSpec[],
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw blameScenarioFile(error, scenario, commandLine, flags);
  }
}

/** The error to report for `error`: blamingScenarioFile's rule, for a check that does not wait. */
export function blameScenarioFile(
  error: unknown,
  scenario: LoadedScenario | undefined,
  commandLine: readonly string[],
  flags: readonly FlagSpec[],
): unknown {
  if (!(error instanceof UsageError) || scenario?.keyLines === undefined) return error;
  const named = /^-([a-z][a-z-]*): (.*)$/s.exec(error.message);
  const line = named === null ? undefined : scenario.keyLines[named[1]!];
  if (line === undefined || givenFlagNames(commandLine, flags).has(named![1]!)) return error;
  return new InputFileError(`${scenario.file}:${line}: ${named![1]}: ${named![2]}`);
}
