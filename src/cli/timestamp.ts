/**
 * Log-line timestamps in Go's time.StampMilli layout, "Jan _2 15:04:05.000", so the CLI's
 * output reads like the Go tools it imitates.
 */

const MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec";

/**
 * Formats an epoch time in milliseconds as "Jun 21 22:11:08.519" (day padded with a space,
 * 24-hour clock). Sub-millisecond fractions are dropped by flooring, as Go truncates toward
 * the start of the second even before 1970. Local time unless timeZone is "utc".
 * Throws RangeError for NaN, infinities and times outside the Date range.
 */
export function formatStampMilli(epochMs: number, timeZone: "local" | "utc" = "local"): string {
  const date = new Date(Math.floor(epochMs));
  if (Number.isNaN(date.getTime())) {
    throw new RangeError(`formatStampMilli: invalid time ${epochMs}`);
  }
  const utc = timeZone === "utc";
  const month = utc ? date.getUTCMonth() : date.getMonth();
  const day = utc ? date.getUTCDate() : date.getDate();
  const hours = utc ? date.getUTCHours() : date.getHours();
  const minutes = utc ? date.getUTCMinutes() : date.getMinutes();
  const seconds = utc ? date.getUTCSeconds() : date.getSeconds();
  const millis = utc ? date.getUTCMilliseconds() : date.getMilliseconds();
  return (
    `${MONTHS.slice(month * 3, month * 3 + 3)} ${String(day).padStart(2, " ")} ` +
    `${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(millis, 3)}`
  );
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}
