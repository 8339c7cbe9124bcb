import { type ArgvFlag, normalizeArgv } from "../cli/argv.ts";
import { findStrategy, parseStrategyList, presetOf, type RunName, STRATEGY_PARAMETER_FLAGS, strategyOfRun } from "./registry.ts";

/** A strategy or preset as the experiment runs it, and the client flags that select it. */
export interface StrategyRun {
  readonly name: RunName;
  readonly clientArgs: readonly string[];
}

/**
 * Parses a strategy list (or `all`, or `presets`) into runs. The reference strategy is
 * selected with the reference program's own flag, exactly as a person would run it; a
 * preset by the flags it stands for.
 */
export function parseStrategies(text: string): StrategyRun[] {
  return parseStrategyList(text).map((name) => ({
    name,
    clientArgs: presetOf(name)?.args ?? (name === "exponential-backoff" ? ["-exponential-backoff"] : ["-strategy", name]),
  }));
}

/**
 * The client flags of a comparison with the parameter flags that this run's strategy does
 * not read left out, as the simulator leaves them out (withStrategy in src/sim/trial.ts):
 * `-min-delay 20s` given for full jitter must not make fixed's client refuse to start. The
 * arguments are read by the command line's own rules (`flags`: the client's table) and come
 * back one `--name=value` token each.
 */
export function clientArgsOfRun(run: StrategyRun, args: readonly string[], flags: readonly ArgvFlag[]): string[] {
  const reads = findStrategy(strategyOfRun(run.name))!.parameters;
  const unread = new Set<string>(STRATEGY_PARAMETER_FLAGS.map((flag) => flag.name).filter((name) => !(name in reads)));
  return normalizeArgv(args, flags).filter((token) => !unread.has(token.slice(2, token.indexOf("="))));
}
