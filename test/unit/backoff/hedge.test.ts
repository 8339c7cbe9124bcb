import { describe, expect, it } from "vitest";
import { HEDGE_KEEP, HEDGE_SEND_NEXT, HEDGE_WAIT, hedgeAfterAnswer, hedgeAfterDelay } from "../../../src/backoff/hedge.ts";

describe("hedging decisions (gRPC A6 hedgingPolicy)", () => {
  it("keeps a success or a fatal failure, whatever is still in flight", () => {
    expect(hedgeAfterAnswer(3, 1, 0, true, true)).toBe(HEDGE_KEEP);
    expect(hedgeAfterAnswer(3, 2, 1, true, true)).toBe(HEDGE_KEEP);
    expect(hedgeAfterAnswer(3, 1, 0, false, false)).toBe(HEDGE_KEEP);
    expect(hedgeAfterAnswer(3, 3, 2, false, false)).toBe(HEDGE_KEEP);
  });

  it("sends the next copy at once after a non-fatal failure while copies are left", () => {
    expect(hedgeAfterAnswer(3, 1, 0, false, true)).toBe(HEDGE_SEND_NEXT);
    expect(hedgeAfterAnswer(3, 2, 1, false, true)).toBe(HEDGE_SEND_NEXT);
  });

  it("waits for the copies in flight once all are sent, and keeps the last failure", () => {
    expect(hedgeAfterAnswer(3, 3, 1, false, true)).toBe(HEDGE_WAIT);
    expect(hedgeAfterAnswer(3, 3, 0, false, true)).toBe(HEDGE_KEEP);
  });

  it("sends another copy after the delay only while fewer than maxAttempts went out", () => {
    expect(hedgeAfterDelay(3, 1)).toBe(true);
    expect(hedgeAfterDelay(3, 2)).toBe(true);
    expect(hedgeAfterDelay(3, 3)).toBe(false);
  });
});
