import { UsageError } from "./usage-error.ts";

/** What the normalizer needs to know about one flag. */
export interface ArgvFlag {
  readonly name: string;
  readonly kind: string;
}

export const HELP_TOKEN = "--help";

/**
 * Go-style flags (`-name value`, `-name=value`, `--name`, bare booleans, `-flag=false`)
 * rewritten to one canonical `--name=value` token each, for commander. commander's own
 * single-dash options are one character long, so this file owns the translation.
 * Unknown flags, missing values and stray arguments become UsageErrors worded as Go's.
 */
export function normalizeArgv(args: readonly string[], flags: readonly ArgvFlag[]): string[] {
  const byName = new Map(flags.map((flag) => [flag.name, flag]));
  const normalized: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === "--") {
      const rest = args[index + 1];
      if (rest !== undefined) throw new UsageError(`unexpected argument "${rest}"`);
      break;
    }
    if (!arg.startsWith("-") || arg === "-") throw new UsageError(`unexpected argument "${arg}"`);
    const body = arg.startsWith("--") ? arg.slice(2) : arg.slice(1);
    const equals = body.indexOf("=");
    const name = equals === -1 ? body : body.slice(0, equals);
    const inlineValue = equals === -1 ? undefined : body.slice(equals + 1);
    if (name === "h" || name === "help") {
      normalized.push(HELP_TOKEN);
      continue;
    }
    const flag = byName.get(name);
    if (flag === undefined || name === "") throw new UsageError(`flag provided but not defined: -${name}`);
    if (flag.kind === "boolean") {
      normalized.push(`--${name}=${inlineValue ?? "true"}`);
      continue;
    }
    let value = inlineValue;
    if (value === undefined) {
      value = args[index + 1];
      if (value === undefined) throw new UsageError(`flag needs an argument: -${name}`);
      index++;
    }
    normalized.push(`--${name}=${value}`);
  }
  return normalized;
}

/** Go's strconv.ParseBool, which its flag package uses for `-flag=value`. */
export function parseGoBool(text: string): boolean | undefined {
  if (["1", "t", "T", "true", "TRUE", "True"].includes(text)) return true;
  if (["0", "f", "F", "false", "FALSE", "False"].includes(text)) return false;
  return undefined;
}

/**
 * Go's flag rule for programs that take arguments after their flags (`merge -json a b`):
 * flags end at the first argument that is not one (or after `--`); the rest are arguments.
 * A flag's value given as the next token is not taken for an argument.
 */
export function splitArguments(args: readonly string[], flags: readonly ArgvFlag[]): { flags: string[]; rest: string[] } {
  const byName = new Map(flags.map((flag) => [flag.name, flag]));
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === "--") return { flags: args.slice(0, index), rest: args.slice(index + 1) };
    if (!arg.startsWith("-") || arg === "-") return { flags: args.slice(0, index), rest: args.slice(index) };
    const body = arg.startsWith("--") ? arg.slice(2) : arg.slice(1);
    const flag = byName.get(body);
    if (flag !== undefined && flag.kind !== "boolean") index++;
  }
  return { flags: [...args], rest: [] };
}
