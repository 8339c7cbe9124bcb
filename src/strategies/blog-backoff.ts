import { formatDuration } from "../cli/duration.ts";
import type { BackoffPolicy } from "../backoff/policy.ts";
import { refusalOf, UsageError } from "../cli/usage-error.ts";
import { buildStrategyPolicy, STRATEGY_PARAMETER_FLAGS, type StrategyName, type StrategyParameterValues } from "./registry.ts";

/*
 * The five policies of Marc Brooker's "Exponential Backoff And Jitter" (AWS Architecture
 * Blog, 2015), as strategies of the registry with the blog's base and cap. Its simulator
 * (github.com/aws-samples/aws-arch-backoff-simulator, backoff_simulator.py) counts attempts
 * from 1 at the first conflict and computes min(cap, base x 2^attempt), so its first ceiling
 * is 2 x base; the registry's full and equal jitter use base x 2^(n-1), so they are given
 * 2 x base to draw exactly the blog's waits. Its exponential is the registry's exponential
 * (min-delay x factor^n) with factor 2 and no jitter; its decorrelated jitter is the
 * registry's with the same base.
 */

/** The blog simulator's `backoff_cls(5, 2000)`: base 5 ms, cap 2 s. */
export const BLOG_BASE_MS = 5;
export const BLOG_CAP_MS = 2000;

export interface BlogRun {
  /** The name the blog's figures use, in our words. */
  readonly name: string;
  readonly blogName: string;
  readonly strategy: StrategyName;
  /** The registry parameters that reproduce the blog's waits for a base and a cap. */
  readonly parameters: (baseMs: number, capMs: number) => Partial<StrategyParameterValues>;
}

export const BLOG_RUNS = [
  { name: "none", blogName: "None", strategy: "fixed", parameters: () => ({ "simple-backoff-delay": 0 }) },
  {
    name: "exponential",
    blogName: "Exponential",
    strategy: "exponential",
    parameters: (baseMs, capMs) => ({ "min-delay": baseMs, "max-delay": capMs, "backoff-factor": 2, jitter: 0 }),
  },
  {
    name: "full-jitter",
    blogName: "FullJitter",
    strategy: "full-jitter",
    parameters: (baseMs, capMs) => ({ "min-delay": 2 * baseMs, "max-delay": capMs }),
  },
  {
    name: "equal-jitter",
    blogName: "EqualJitter",
    strategy: "equal-jitter",
    parameters: (baseMs, capMs) => ({ "min-delay": 2 * baseMs, "max-delay": capMs }),
  },
  {
    name: "decorrelated-jitter",
    blogName: "Decorr",
    strategy: "decorrelated-jitter",
    parameters: (baseMs, capMs) => ({ "min-delay": baseMs, "max-delay": capMs }),
  },
] as const satisfies readonly BlogRun[];

export type BlogRunName = (typeof BLOG_RUNS)[number]["name"];

export const BLOG_RUN_NAMES: readonly BlogRunName[] = BLOG_RUNS.map((run) => run.name);

/** Parses `none,full-jitter` (or `all`); throws a UsageError naming an unknown name. */
export function parseBlogRuns(text: string): BlogRun[] {
  return text.split(",").flatMap((part): BlogRun[] => {
    const name = part.trim();
    if (name === "all") return [...BLOG_RUNS];
    const run = BLOG_RUNS.find((candidate) => candidate.name === name);
    if (run === undefined)
      throw new UsageError(`unknown strategy "${name}" for -workload occ; one of ${BLOG_RUN_NAMES.join(", ")}, or all`);
    return [run];
  });
}

/** For a flag table's `check`. */
export function blogRunsProblem(text: string): string | undefined {
  return refusalOf(() => parseBlogRuns(text), UsageError);
}

/** The policy of a blog run, built by the registry. */
export function blogPolicy(run: BlogRun, baseMs: number, capMs: number): BackoffPolicy {
  const defaults = Object.fromEntries(STRATEGY_PARAMETER_FLAGS.map((flag) => [flag.name, flag.default])) as StrategyParameterValues;
  return buildStrategyPolicy(run.strategy, { ...defaults, ...run.parameters(baseMs, capMs) });
}

/** The registry flags a blog run stands for, as help and documents show them. */
export function blogRunFlags(run: BlogRun, baseMs: number, capMs: number): string {
  const parameters = Object.entries(run.parameters(baseMs, capMs)).map(([flag, value]) => {
    const spec = STRATEGY_PARAMETER_FLAGS.find((candidate) => candidate.name === flag)!;
    return `-${flag} ${spec.kind === "duration" ? formatDuration(value as number) : String(value)}`;
  });
  return ["-strategy", run.strategy, ...parameters].join(" ");
}

/** Help lines: each blog run and the registry strategy it is. */
export function blogRunsHelp(baseMs = BLOG_BASE_MS, capMs = BLOG_CAP_MS): string {
  return BLOG_RUNS.map((run) => `  ${run.name} (the blog's ${run.blogName}): ${blogRunFlags(run, baseMs, capMs)}\n`).join("");
}
