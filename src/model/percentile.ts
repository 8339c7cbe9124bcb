/**
 * The nearest-rank percentile of sorted values: the smallest value with at least `fraction`
 * of the values at or below it (rank ⌈fraction × n⌉, at least 1). It is always one of the
 * values, never an interpolation; undefined when there are none. The one rule every
 * percentile of this project follows (HdrHistogram's percentiles, in the client, are the
 * library's own).
 */
export function percentile(sorted: ArrayLike<number>, fraction: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(fraction * sorted.length)));
  return sorted[rank - 1];
}

/** The nearest-rank median (percentile 0.5) of values in any order; undefined when there are none. */
export function median(values: readonly number[]): number | undefined {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}
