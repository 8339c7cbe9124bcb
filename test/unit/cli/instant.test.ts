import { describe, expect, it } from "vitest";
import { instantProblem, parseInstant } from "../../../src/cli/instant.ts";

describe("parseInstant", () => {
  it.each([
    ["2025-06-21T22:11:08Z", Date.UTC(2025, 5, 21, 22, 11, 8)],
    ["2025-06-21T22:11:08.519Z", Date.UTC(2025, 5, 21, 22, 11, 8, 519)],
    ["2025-06-21t22:11:08z", Date.UTC(2025, 5, 21, 22, 11, 8)],
    ["2025-06-21 22:11:08Z", Date.UTC(2025, 5, 21, 22, 11, 8)],
    ["2025-06-22T00:11:08+02:00", Date.UTC(2025, 5, 21, 22, 11, 8)],
    ["2025-06-21T20:41:08.25-01:30", Date.UTC(2025, 5, 21, 22, 11, 8, 250)],
    ["1750543868000", 1750543868000],
    ["0", 0],
  ])("reads %s", (text, epochMs) => {
    expect(parseInstant(text)).toBe(epochMs);
  });

  it.each([
    ["2025-06-21T22:11:08", "must be an RFC 3339 time"],
    ["2025-06-21", "must be an RFC 3339 time"],
    ["yesterday", "must be an RFC 3339 time"],
    ["-5", "must be an RFC 3339 time"],
    ["2025-02-30T00:00:00Z", "is not a valid date and time"],
    ["2025-06-21T24:00:00Z", "is not a valid date and time"],
    ["99999999999999999", "out of range"],
  ])("refuses %s", (text, problem) => {
    expect(instantProblem(text)).toContain(problem);
  });
});
