import { parseStrategyList, type StrategyName } from "../strategies/registry.ts";

/** A strategy as the experiment runs it, and the client flags that select it. */
export interface StrategyRun {
  readonly name: StrategyName;
  readonly clientArgs: readonly string[];
}

/**
 * Parses a strategy list (or `all`) into runs. The reference strategy is selected with the
 * reference program's own flag, exactly as a person would run it.
 */
export function parseStrategies(text: string): StrategyRun[] {
  return parseStrategyList(text).map((name) => ({
    name,
    clientArgs: name === "exponential-backoff" ? ["-exponential-backoff"] : ["-strategy", name],
  }));
}
