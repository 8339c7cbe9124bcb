import { checkNumber } from "./validate.ts";

/**
 * Counts over a sliding window of time, kept in buckets, for several independent series at
 * once (one series per client instance): the retry budgets, throttles and breakers that
 * remember "the last N seconds" all keep their history here. Time is an argument, in ms.
 *
 * The window is `buckets` buckets of `windowMs / buckets` each, aligned to multiples of the
 * bucket length. A value added at time t counts until the end of the bucket that holds
 * t + windowMs - bucketMs, so it is exact at bucket edges: a value added on a bucket edge
 * expires exactly `windowMs` later, one added inside a bucket up to one bucket earlier.
 * Finagle's WindowedAdder (twitter/util) and Polly's rolling health metrics work the same
 * way. Nothing is allocated after construction: a million series fit in a few typed arrays.
 */
export class RollingCounts {
  readonly windowMs: number;
  readonly buckets: number;
  readonly bucketMs: number;
  readonly fields: number;
  readonly series: number;
  /** [series][field][bucket], bucket number modulo `buckets`. */
  private readonly counts: Float64Array;
  /** [series][field]: the sum of the live buckets. */
  private readonly sums: Float64Array;
  /** [series]: the newest bucket number seen (floor(t / bucketMs)). */
  private readonly newest: Float64Array;

  /**
   * @param windowMs the window's length, > 0
   * @param buckets how many buckets it is kept in, an integer >= 1
   * @param fields how many counters each series has (e.g. requests and accepts)
   * @param series how many independent series
   */
  constructor(options: { windowMs: number; buckets: number; fields?: number; series?: number }) {
    this.windowMs = checkNumber("windowMs", options.windowMs, { above: 0 });
    this.buckets = checkNumber("buckets", options.buckets, { min: 1, integer: true });
    this.fields = checkNumber("fields", options.fields ?? 1, { min: 1, integer: true });
    this.series = checkNumber("series", options.series ?? 1, { min: 1, integer: true });
    this.bucketMs = this.windowMs / this.buckets;
    this.counts = new Float64Array(this.series * this.fields * this.buckets);
    this.sums = new Float64Array(this.series * this.fields);
    this.newest = new Float64Array(this.series).fill(-Infinity);
  }

  /** Adds `amount` (may be negative) to one field of one series at `nowMs`. */
  add(series: number, field: number, nowMs: number, amount: number): void {
    const bucket = this.advance(series, nowMs);
    const row = series * this.fields + field;
    this.counts[row * this.buckets + this.slot(bucket)]! += amount;
    this.sums[row]! += amount;
  }

  /** The sum of one field of one series over the window ending at `nowMs`. */
  sum(series: number, field: number, nowMs: number): number {
    this.advance(series, nowMs);
    return this.sums[series * this.fields + field]!;
  }

  /** Forgets everything one series counted. */
  clear(series: number): void {
    for (let field = 0; field < this.fields; field++) {
      const row = series * this.fields + field;
      this.counts.fill(0, row * this.buckets, (row + 1) * this.buckets);
      this.sums[row] = 0;
    }
  }

  /**
   * Moves a series' window to `nowMs`, emptying the buckets that fell out of it, and returns
   * the current bucket number. A clock that steps back counts into the newest bucket.
   */
  private advance(series: number, nowMs: number): number {
    const current = Math.floor(nowMs / this.bucketMs);
    const newest = this.newest[series]!;
    if (current <= newest) return newest;
    this.newest[series] = current;
    if (current - newest >= this.buckets) {
      this.clear(series);
      return current;
    }
    for (let bucket = newest + 1; bucket <= current; bucket++) {
      const slot = this.slot(bucket);
      for (let field = 0; field < this.fields; field++) {
        const row = series * this.fields + field;
        const index = row * this.buckets + slot;
        this.sums[row]! -= this.counts[index]!;
        this.counts[index] = 0;
      }
    }
    return current;
  }

  /** Where a bucket number lives in its series' ring (times before 0 too). */
  private slot(bucket: number): number {
    const slot = bucket % this.buckets;
    return slot < 0 ? slot + this.buckets : slot;
  }
}
