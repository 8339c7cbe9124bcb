import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the heap grow past what the last full collection left, in percent. A herd
 * promotes most of each attempt's garbage (at 100 000 users on one thread, about 13 MB a second
 * moved to the old generation), and with V8's own factor the worker's heap grew to 3.5 to 5 times
 * what was live (195 and 274 MB before collections that left 56 and 57) and the client's peak RSS
 * to 400-493 MB; growing by half, it peaked at 283-292 MB, its full collections (about 10 ms each)
 * every 2 s or so instead of every 10 (BENCHMARKS.md, "The heap's growth, and how often 100 000
 * users on one thread hold").
 */
export const HEAP_GROWING_PERCENT = 50;

/** Set before the herd's worker threads start: V8's flags are the process's, each thread's heap reads them as it grows. */
export function keepHeapNearLive(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
