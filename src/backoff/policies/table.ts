import type { Random } from "../random.ts";
import { checkNumber, describe, FieldRangeError, NON_NEGATIVE } from "../validate.ts";
import { definePolicy, type FactoryOptions } from "./definition.ts";
import { goDuration, waitShape } from "./wait-shape.ts";

/**
 * A table of waits, saturating at its last entry (Peter Bourgon, "Simple backoff", Gopher Academy
 * Blog, https://blog.gopheracademy.com/advent-2014/backoff/): the wait
 * after the n-th failure is `jitter(delaysMs[min(n, length - 1)])`, with
 * `jitter(m) = m === 0 ? 0 : floor(m / 2) + uniformInt(m)`, i.e. uniform integer ms in
 * [m/2, 1.5m) as in the Go code. Entry 0 is the wait before the very first attempt
 * (attempt 0), as in the article's `retryConn` loop.
 */
export interface TablePolicy {
  readonly kind: "table";
  /** Waits by attempt, ms. Default [0, 10, 10, 100, 100, 500, 500, 3000, 3000, 5000]. */
  readonly delaysMs: readonly number[];
}

const DEFAULTS: TablePolicy = Object.freeze({
  kind: "table",
  delaysMs: Object.freeze([0, 10, 10, 100, 100, 500, 500, 3000, 3000, 5000]),
});

function check(policy: TablePolicy): void {
  const table: unknown = policy.delaysMs;
  if (!Array.isArray(table)) throw new FieldRangeError("delaysMs", "must be an array of numbers", describe(table));
  if (table.length === 0) throw new FieldRangeError("delaysMs", "must not be empty", "[]");
  table.forEach((entry: unknown, index) => checkNumber("delaysMs", entry, NON_NEGATIVE, index));
}

export function tablePolicy(options: FactoryOptions<TablePolicy> = {}): TablePolicy {
  const delaysMs = options.delaysMs ?? DEFAULTS.delaysMs;
  // Validate the caller's array, then keep a frozen copy so later mutation cannot leak in.
  check({ kind: "table", delaysMs });
  return Object.freeze({ kind: "table", delaysMs: Object.freeze([...delaysMs]) });
}

/** Go's `jitter(millis)`: integer ms uniform in [m/2, 1.5m), 0 for 0. */
function tableWait(policy: TablePolicy, attempt: number, random: Random): number {
  const table = policy.delaysMs;
  const index = Math.min(Math.floor(attempt), table.length - 1);
  const middleMs = table[index] ?? 0; // never undefined: tables are non-empty
  if (middleMs === 0) return 0;
  return Math.floor(middleMs / 2) + random.uniformInt(middleMs);
}

export const table = definePolicy<TablePolicy>({
  defaults: DEFAULTS,
  create: tablePolicy,
  libraryName: "tablePolicy",
  check,
  delay: (policy, attempt, _previousDelayMs, random) => tableWait(policy, attempt, random),
  waitBeforeFirstAttempt: (policy, random) => tableWait(policy, 0, random),
  exactWaits: (policy) => ({ form: "listed", delaysMs: policy.delaysMs }),
  firstWaitFollowsThinkTime: false,
  waitShape: (policy) => {
    const entries = policy.delaysMs.slice(1).filter((entry) => entry > 0);
    const first = entries[0] ?? 1;
    const last = entries.at(-1) ?? first;
    const steps = Math.max(1, policy.delaysMs.length - 2);
    const multiplier = last > first ? Number(((last / first) ** (1 / steps)).toFixed(3)) : 1;
    return waitShape(first, multiplier, last, "table", first, Infinity, [
      `the table of waits (${policy.delaysMs.join(", ")} ms) is approximated by an exponential from ${goDuration(first)} growing ${multiplier}x to ${goDuration(last)}`,
    ]);
  },
  waitExpression: (policy, attempt) => {
    const table = `[${policy.delaysMs.join(", ")}]`;
    return `((m) => (m === 0 ? 0 : Math.floor(m / 2) + Math.floor(Math.random() * m)))(${table}[Math.min(${attempt}, ${policy.delaysMs.length - 1})]!)`;
  },
  drawsNormal: false,
});
