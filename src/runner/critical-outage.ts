/** What the search for the critical outage found. */
export type CriticalOutage =
  { readonly kind: "none" } | { readonly kind: "at-least" } | { readonly kind: "between"; readonly lowMs: number; readonly highMs: number };

/**
 * The longest outage after which `recovers` still holds, by bisection between
 * `resolutionMs` and `upperMs`: none when even the shortest fails, at least `upperMs` when
 * the longest passes, else the last passing and first failing outage `resolutionMs` apart.
 *
 * The answer is that of the plain sequential bisection, whatever `width` says: with room
 * for more than one evaluation at a time (`width()` > 1), the points the bisection may need
 * next are evaluated ahead, breadth-first (the midpoint, then both quarter points, …), and
 * the bisection reads their results when it gets there; points it never reaches are wasted
 * work, never a different answer. So the output does not depend on the number of cores.
 */
export async function bisectCriticalOutage(
  recovers: (outageMs: number) => Promise<boolean>,
  width: () => number,
  resolutionMs: number,
  upperMs: number,
): Promise<CriticalOutage> {
  const known = new Map<number, Promise<boolean>>();
  const evaluate = (outageMs: number): Promise<boolean> => {
    let result = known.get(outageMs);
    if (result === undefined) {
      result = recovers(outageMs);
      // An evaluation ahead may never be awaited; its failure must not go unhandled.
      result.catch(() => {});
      known.set(outageMs, result);
    }
    return result;
  };
  const evaluateAhead = (low: number, high: number, count: number) => {
    const frontier: [number, number][] = [[low, high]];
    let started = 0;
    while (frontier.length > 0 && started < count) {
      const [from, to] = frontier.shift()!;
      if (to - from <= resolutionMs) continue;
      const middle = Math.round((from + to) / 2);
      if (!known.has(middle)) {
        void evaluate(middle);
        started++;
      }
      frontier.push([from, middle], [middle, to]);
    }
  };

  if (width() > 1) void evaluate(upperMs);
  if (!(await evaluate(resolutionMs))) return { kind: "none" };
  if (await evaluate(upperMs)) return { kind: "at-least" };
  let low = resolutionMs;
  let high = upperMs;
  while (high - low > resolutionMs) {
    const middle = Math.round((low + high) / 2);
    if (!known.has(middle)) evaluateAhead(low, high, width());
    if (await evaluate(middle)) low = middle;
    else high = middle;
  }
  return { kind: "between", lowMs: low, highMs: high };
}
