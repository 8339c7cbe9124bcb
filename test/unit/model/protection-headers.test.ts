import { describe, expect, it } from "vitest";
import { formatDeadline, parseDeadline, retryAfterSeconds } from "../../../src/model/protection-headers.ts";
import { parseRetryAfter } from "../../../src/backoff/retry-after.ts";

describe("protection headers", () => {
  it("rounds a Retry-After up to whole seconds, so a client never comes back earlier than asked", () => {
    expect([0, 1, 999, 1_000, 1_001, 1_500, 60_000].map(retryAfterSeconds)).toEqual([0, 1, 1, 1, 2, 2, 60]);
    for (const waitMs of [1, 250, 1_000, 1_001, 2_999]) {
      expect(parseRetryAfter(String(retryAfterSeconds(waitMs)), 0)).toBeGreaterThanOrEqual(waitMs);
    }
  });

  it("writes a deadline as whole epoch ms, rounded up, and reads back only well-formed values", () => {
    expect(formatDeadline(1_718_999_468_519)).toBe("1718999468519");
    expect(formatDeadline(1_718_999_468_519.2)).toBe("1718999468520");
    expect(parseDeadline(" 1718999468519 ")).toBe(1_718_999_468_519);
    for (const bad of [undefined, "", "soon", "-5", "1.5", "1e12", "1234567890123456", ["1", "2"]]) {
      expect(parseDeadline(bad)).toBeUndefined();
    }
  });
});
