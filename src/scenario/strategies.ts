import { UsageError } from "../cli/usage-error.ts";
import { STRATEGIES } from "../client/options.ts";

/** A strategy as the experiment names it, and the client flags that select it. */
export interface StrategyRun {
  /** `fixed`, `exponential-backoff` (the reference client's flag), or a client -strategy name. */
  readonly name: string;
  readonly clientArgs: readonly string[];
}

export const STRATEGY_NAMES = ["fixed", "exponential-backoff", ...STRATEGIES.filter((name) => name !== "reference" && name !== "fixed")];

/** Parses `fixed,exponential-backoff`, or `all`; throws naming an unknown strategy. */
export function parseStrategies(text: string): StrategyRun[] {
  const names = text === "all" ? STRATEGY_NAMES : text.split(",").map((name) => name.trim());
  return names.map((name) => {
    if (name === "exponential-backoff" || name === "reference")
      return { name: "exponential-backoff", clientArgs: ["-exponential-backoff"] };
    if ((STRATEGIES as readonly string[]).includes(name)) return { name, clientArgs: ["-strategy", name] };
    throw new UsageError(`unknown strategy "${name}"; one of ${STRATEGY_NAMES.join(", ")}, or all`);
  });
}

/** For a flag table's `check`: what is wrong with a strategy list, or undefined. */
export function strategiesProblem(text: string): string | undefined {
  try {
    parseStrategies(text);
    return undefined;
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
}
