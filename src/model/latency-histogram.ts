import * as hdr from "hdr-histogram-js";

/** Latencies are recorded in microseconds, from 1 µs to an hour, to 3 significant digits. */
export const HISTOGRAM_MAX_US = 3_600_000_000;

/** The p50, p99 and maximum of a window's OK latencies. */
export interface LatencySummary {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export type LatencyHistogram = hdr.Histogram;

/** An empty latency histogram (µs). */
export function newLatencyHistogram(): LatencyHistogram {
  return hdr.build({
    bitBucketSize: 64,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HISTOGRAM_MAX_US,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
}

/**
 * The percentiles of `histogram`. Its buckets hold values to 3 significant digits and answer
 * with a bucket's upper end, so the exact maximum is tracked beside it (a histogram read back
 * from its encoding, or merged, knows it only to a bucket's width): pass it as `exactMaxMs`.
 * Percentiles are clamped to the maximum, so p50 <= p99 <= max always holds.
 */
export function summarizeLatency(histogram: LatencyHistogram, exactMaxMs?: number): LatencySummary | undefined {
  if (histogram.totalCount === 0) return undefined;
  const maxMs = exactMaxMs ?? histogram.maxValue / 1000;
  return {
    p50Ms: Math.min(histogram.getValueAtPercentile(50) / 1000, maxMs),
    p99Ms: Math.min(histogram.getValueAtPercentile(99) / 1000, maxMs),
    maxMs,
  };
}

/** The largest of the parts' exact maxima, or undefined when a part with values has none. */
export function exactMaximum(parts: readonly { histogram: LatencyHistogram | undefined; maxMs: number | undefined }[]): number | undefined {
  let maximum: number | undefined;
  for (const part of parts) {
    if (part.histogram === undefined || part.histogram.totalCount === 0) continue;
    if (part.maxMs === undefined) return undefined;
    maximum = Math.max(maximum ?? 0, part.maxMs);
  }
  return maximum;
}

/**
 * The histogram in HdrHistogram's compressed base64 form ("HISTFAAA…"), the form the Java,
 * Go and JavaScript HdrHistogram libraries exchange: a shard's JSON carries it so that
 * windows from many processes can be merged exactly instead of averaging percentiles.
 */
export function encodeLatencyHistogram(histogram: LatencyHistogram): string {
  return hdr.encodeIntoCompressedBase64(histogram);
}

/** Reads encodeLatencyHistogram's form back; throws on anything else. */
export function decodeLatencyHistogram(encoded: string): LatencyHistogram {
  const decoded = hdr.decodeFromCompressedBase64(encoded, 64, false);
  // Into our own bounds, so that every merged histogram has the same layout.
  const histogram = newLatencyHistogram();
  histogram.add(decoded);
  return histogram;
}

/** A new histogram holding the sum of `histograms` (undefined ones skipped), or undefined when none holds a value. */
export function addLatencyHistograms(histograms: readonly (LatencyHistogram | undefined)[]): LatencyHistogram | undefined {
  let sum: LatencyHistogram | undefined;
  for (const histogram of histograms) {
    if (histogram === undefined || histogram.totalCount === 0) continue;
    sum ??= newLatencyHistogram();
    sum.add(histogram);
  }
  return sum;
}
