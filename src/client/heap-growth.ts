import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the heap grow past what the last full collection left, in percent. A herd
 * promotes most of each attempt's garbage (at 100 000 users on one thread, about 13 MB a second
 * moved to the old generation), and with V8's own factor the worker's heap grew to four or five
 * times what was live (274 MB before a collection that left 57) and the client's peak RSS to
 * 400-490 MB; growing by half, it peaked at 295-312 MB, its full collections (about 10 ms each)
 * every 2 s instead of every 10 (BENCHMARKS.md, "An attempt on the wire").
 */
export const HEAP_GROWING_PERCENT = 50;

/** Set before the herd's worker threads start: V8's flags are the process's, each thread's heap reads them as it grows. */
export function keepHeapNearLive(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
