import { checkNumber, GOOGLE_MAX_RETRIES_LIMIT } from "../validate.ts";
import { definePolicy, filledPolicy, type FactoryOptions } from "./definition.ts";
import { fittedWaitShape, meanSequence } from "./wait-shape.ts";

/**
 * Google's recipe (Google Cloud, "Exponential backoff",
 * https://cloud.google.com/memorystore/docs/redis/exponential-backoff): the wait after the n-th failure
 * is `2^(n-1) s + r`, `r` a fresh uniform integer in [0, 1000] ms; after `maxRetries`
 * retries it gives up. The five default waits total 31 s plus up to 5 s of jitter.
 */
export interface GooglePolicy {
  readonly kind: "google";
  /** Retries before giving up, an integer in [0, 1000]. Default 5. */
  readonly maxRetries: number;
}

/** Google's recipe: the first retry waits 1 s, and each later one doubles it. */
const GOOGLE_FIRST_WAIT_MS = 1000;
/** Google's recipe: "random_number_milliseconds ... less than or equal to 1000". */
const GOOGLE_MAX_JITTER_MS = 1000;

const DEFAULTS: GooglePolicy = Object.freeze({ kind: "google", maxRetries: 5 });

function check(policy: GooglePolicy): void {
  checkNumber("maxRetries", policy.maxRetries, { min: 0, max: GOOGLE_MAX_RETRIES_LIMIT, integer: true });
}

export function googlePolicy(options: FactoryOptions<GooglePolicy> = {}): GooglePolicy {
  return filledPolicy(DEFAULTS, options, check);
}

export const google = definePolicy<GooglePolicy>({
  defaults: DEFAULTS,
  create: googlePolicy,
  libraryName: "googlePolicy",
  check,
  delay: (policy, attempt, _previousDelayMs, random) => {
    // The one kind that gives up by itself.
    if (attempt > policy.maxRetries) return undefined;
    return GOOGLE_FIRST_WAIT_MS * 2 ** (attempt - 1) + random.uniformInt(GOOGLE_MAX_JITTER_MS + 1);
  },
  firstWaitFollowsThinkTime: false,
  waitShape: (policy, context) => {
    const means = meanSequence(
      context,
      policy.maxRetries + 1,
      (retry) => GOOGLE_FIRST_WAIT_MS * 2 ** (retry - 1) + GOOGLE_MAX_JITTER_MS / 2,
    );
    return fittedWaitShape(
      GOOGLE_FIRST_WAIT_MS,
      means,
      GOOGLE_FIRST_WAIT_MS * 2 ** (policy.maxRetries - 1),
      "additive",
      policy.maxRetries + 1,
    );
  },
  waitExpression: (_policy, attempt) =>
    `${GOOGLE_FIRST_WAIT_MS} * 2 ** (${attempt} - 1) + Math.floor(Math.random() * ${GOOGLE_MAX_JITTER_MS + 1})`,
  drawsNormal: false,
});
