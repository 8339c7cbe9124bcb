/**
 * The wait an HTTP `Retry-After` header asks for, in ms from `nowMs`: either delay-seconds
 * (a non-negative integer) or an HTTP-date (RFC 9110, section 10.2.3). A date in the past
 * means 0. Anything else is undefined: the caller then falls back on its policy.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only dates in an HTTP-date form, not any text Date.parse happens to accept.
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
  const atMs = Date.parse(text);
  return Number.isNaN(atMs) ? undefined : Math.max(0, atMs - nowMs);
}
