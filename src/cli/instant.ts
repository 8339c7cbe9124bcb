/**
 * An instant on the command line: RFC 3339 (`2025-06-21T22:11:08Z`, `2025-06-21T22:11:08.5+02:00`)
 * or milliseconds since the Unix epoch (`1750543868000`). Returns epoch milliseconds.
 * RFC 3339 requires the offset, so a time is never read in a machine's local zone: the
 * point is that machines in different zones agree on it.
 */
export function parseInstant(text: string): number {
  if (/^\d+$/.test(text)) {
    const epochMs = Number(text);
    if (!Number.isSafeInteger(epochMs) || epochMs > 8.64e15) throw new Error("epoch milliseconds out of range");
    return epochMs;
  }
  const match = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(text);
  if (match === null) throw new Error("must be an RFC 3339 time such as 2025-06-21T22:11:08Z, or epoch milliseconds");
  const [, year, month, day, hour, minute, second, fraction = "", zone] = match;
  const epochMs = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction.slice(0, 4)}${zone!.toUpperCase()}`);
  // Date.parse rolls some impossible dates over (Feb 30); compare the fields to refuse them.
  const check = new Date(epochMs + (zone!.toUpperCase() === "Z" ? 0 : zoneOffsetMs(zone!)));
  if (
    Number.isNaN(epochMs) ||
    check.getUTCFullYear() !== Number(year) ||
    check.getUTCMonth() + 1 !== Number(month) ||
    check.getUTCDate() !== Number(day) ||
    Number(hour) > 23 ||
    Number(minute) > 59 ||
    Number(second) > 59
  ) {
    throw new Error("is not a valid date and time");
  }
  return epochMs;
}

function zoneOffsetMs(zone: string): number {
  const sign = zone.startsWith("-") ? -1 : 1;
  const [hours, minutes] = zone.slice(1).split(":").map(Number) as [number, number];
  return sign * (hours * 60 + minutes) * 60_000;
}

/** For a flag's check: what is wrong with the text, or undefined. */
export function instantProblem(text: string): string | undefined {
  try {
    parseInstant(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
