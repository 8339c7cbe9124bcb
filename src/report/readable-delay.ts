import { formatDuration } from "../cli/duration.ts";

const MS_PER_YEAR = 365.25 * 24 * 3600 * 1000;

/** A time to the millisecond in Go notation, or "never" (a recovery that did not come). */
export function timeOrNever(ms: number | undefined): string {
  return ms === undefined ? "never" : formatDuration(Math.round(ms));
}

/** Go notation up to a year; beyond, years in scientific notation (Go's hours grow to 60 digits). */
export function readableDelay(ms: number): string {
  if (!Number.isFinite(ms)) return "forever";
  return ms < MS_PER_YEAR ? formatDuration(ms) : `${(ms / MS_PER_YEAR).toPrecision(3)} years`;
}
