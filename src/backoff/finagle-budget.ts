import { RollingCounts } from "./rolling-window.ts";
import { checkNumber, type OptionsOf, withDefaults } from "./validate.ts";

/**
 * Finagle's RetryBudget (Twitter, "Retry budgets", https://finagle.github.io/blog/2016/02/08/retry-budgets/;
 * finagle-core com.twitter.finagle.service.RetryBudget): every request deposits into the
 * budget, deposits expire after `ttl`, and a retry may withdraw only while the deposits of
 * the last `ttl` allow it: about `percentCanRetry` of the requests may be retried, plus a
 * reserve of `minRetriesPerSec * ttl` retries for clients that have just started or send
 * little. Withdrawals expire after `ttl` too, so the reserve refills.
 *
 * In Finagle's integer units: a deposit adds 1000, a withdrawal takes `1000 / percentCanRetry`
 * (5000 at 20 %), the reserve is `minRetriesPerSec * ttlSeconds * withdrawal`, and a retry is
 * allowed when the live deposits minus withdrawals plus the reserve cover one withdrawal.
 * The window is kept in 10 buckets, as Finagle's WindowedAdder does (exact at bucket edges).
 * tower's `Budget::new(ttl, min_per_sec, retry_percent)` is the same design.
 */
export interface FinagleRetryBudget {
  /** How long a deposit counts, ms, 1 s to 60 s. Default 10000. */
  readonly ttlMs: number;
  /** Retries per second always allowed (the reserve), an integer >= 0. Default 10. */
  readonly minRetriesPerSec: number;
  /** Retries allowed per request, percent, in [0, 100000]. Default 20. */
  readonly percentCanRetry: number;
}

export const FINAGLE_RETRY_BUDGET_DEFAULTS: FinagleRetryBudget = Object.freeze({
  ttlMs: 10_000,
  minRetriesPerSec: 10,
  percentCanRetry: 20,
});

/** Finagle's scale: a deposit is worth this many units, so that percentages stay integers. */
const SCALE = 1000;
/** Finagle's WindowedAdder keeps its window in 10 slices. */
const BUCKETS = 10;

export function finagleRetryBudget(options: OptionsOf<FinagleRetryBudget> = {}): FinagleRetryBudget {
  const budget = withDefaults(FINAGLE_RETRY_BUDGET_DEFAULTS, options);
  checkNumber("ttlMs", budget.ttlMs, { min: 1000, max: 60_000 });
  checkNumber("minRetriesPerSec", budget.minRetriesPerSec, { min: 0, integer: true });
  checkNumber("percentCanRetry", budget.percentCanRetry, { min: 0, max: 100 * SCALE });
  if (budget.minRetriesPerSec === 0 && budget.percentCanRetry === 0) {
    throw new RangeError("minRetriesPerSec and percentCanRetry must not both be 0 (no retry could ever be allowed)");
  }
  return Object.freeze(budget);
}

/** The budget's state for `instances` independent clients (instance numbers from 0). */
export class FinagleBudgetState {
  readonly budget: FinagleRetryBudget;
  /** Units a request adds; 0 when only the reserve allows retries (as Finagle). */
  readonly depositUnits: number;
  /** Units a retry takes. */
  readonly withdrawalUnits: number;
  /** Units always available over a window. */
  readonly reserveUnits: number;
  private readonly balance: RollingCounts;

  constructor(budget: FinagleRetryBudget = FINAGLE_RETRY_BUDGET_DEFAULTS, instances = 1) {
    this.budget = budget;
    const fraction = budget.percentCanRetry / 100;
    this.depositUnits = fraction === 0 ? 0 : SCALE;
    this.withdrawalUnits = fraction === 0 ? 1 : Math.trunc(SCALE / fraction);
    // Finagle multiplies by ttl.inSeconds, a whole number of seconds.
    this.reserveUnits = budget.minRetriesPerSec * Math.trunc(budget.ttlMs / 1000) * this.withdrawalUnits;
    this.balance = new RollingCounts({ windowMs: budget.ttlMs, buckets: BUCKETS, series: instances });
  }

  /** A request was made. */
  deposit(nowMs: number, instance = 0): void {
    if (this.depositUnits > 0) this.balance.add(instance, 0, nowMs, this.depositUnits);
  }

  /** Takes one retry's worth if the budget has it; false leaves the budget untouched. */
  tryWithdraw(nowMs: number, instance = 0): boolean {
    if (this.balance.sum(instance, 0, nowMs) + this.reserveUnits < this.withdrawalUnits) return false;
    this.balance.add(instance, 0, nowMs, -this.withdrawalUnits);
    return true;
  }

  /** Retries the budget would allow now, as Finagle's `balance`. */
  retriesLeft(nowMs: number, instance = 0): number {
    return Math.floor((this.balance.sum(instance, 0, nowMs) + this.reserveUnits) / this.withdrawalUnits);
  }
}
