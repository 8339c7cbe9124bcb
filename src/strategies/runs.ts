import { parseStrategyList, presetOf, type RunName } from "./registry.ts";

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
