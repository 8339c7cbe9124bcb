import { describe, it, expect } from "vitest";
import { formatStampMilli } from "../../../src/cli/timestamp.ts";

// Epoch values are literals (checked against `date -u`), not computed with Date.UTC.
const utcCases: ReadonlyArray<readonly [number, string]> = [
  [0, "Jan  1 00:00:00.000"],
  [1750543868519, "Jun 21 22:11:08.519"],
  [1136171045006, "Jan  2 03:04:05.006"], // Go's reference time, 2006-01-02 03:04:05.006
  [1709208000000, "Feb 29 12:00:00.000"], // leap day
  [946684799999, "Dec 31 23:59:59.999"],
  [1696928887065, "Oct 10 09:08:07.065"],
  // Milliseconds are truncated, not rounded, as in Go.
  [1750543868519.999, "Jun 21 22:11:08.519"],
  [946684799999.9, "Dec 31 23:59:59.999"],
  // Before 1970 Go still truncates toward the start of the second.
  [-1, "Dec 31 23:59:59.999"],
  [-0.5, "Dec 31 23:59:59.999"],
  [-0, "Jan  1 00:00:00.000"],
];

describe("formatStampMilli in UTC", () => {
  it.each(utcCases)("%d -> %j", (epochMs, text) => {
    expect(formatStampMilli(epochMs, "utc")).toBe(text);
  });
  it.each([NaN, Infinity, -Infinity, 8.64e15 + 1])("%d throws RangeError", (epochMs) => {
    expect(() => formatStampMilli(epochMs, "utc")).toThrow(RangeError);
  });
});

describe("formatStampMilli in local time", () => {
  const epochMs = 1750543868519.7;
  const expected = (): string => {
    const d = new Date(1750543868519);
    const two = (n: number): string => String(n).padStart(2, "0");
    const month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][d.getMonth()];
    return (
      `${month} ${String(d.getDate()).padStart(2, " ")} ${two(d.getHours())}:` +
      `${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, "0")}`
    );
  };
  it("matches the Date getters", () => {
    expect(formatStampMilli(epochMs, "local")).toBe(expected());
  });
  it("is the default", () => {
    expect(formatStampMilli(epochMs)).toBe(expected());
  });
});
