import { constantPolicy } from "../../src/backoff/index.ts";
import type { RetryConfig } from "../../src/model/client-loop.ts";

/** The reference client's defaults (fixed 100 ms retries, 10 s think time), with overrides. */
export const retryConfig = (overrides: Partial<RetryConfig> = {}): RetryConfig => ({
  backoff: constantPolicy({ delayMs: 100 }),
  thinkTimeMeanMs: 10_000,
  maxAttempts: Infinity,
  budget: undefined,
  ...overrides,
});
