import {
  attemptsOf,
  mechanisms,
  type RetryIntent,
  shapeOf,
  type Snippet,
  type SnippetRenderer,
  UNLIMITED_STANDIN,
  unexpressed,
} from "./shared.ts";

/*
 * The AWS SDKs' client settings, retryMode and maxAttempts (also AWS_RETRY_MODE, AWS_MAX_ATTEMPTS),
 * from the AWS SDKs and Tools Reference Guide, "Retry behavior",
 * https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html (retryMode
 * standard | adaptive, maxAttempts).
 */

/** AWS standard mode's backoff: full jitter on 100 ms x 2^n, at most 20 s. */
const AWS_STANDARD = { baseMs: 100, capMs: 20_000 };

function awsSettings(intent: RetryIntent): Snippet {
  const form = shapeOf(intent);
  const notes = [...form.notes];
  const found = mechanisms(intent);
  let maxAttempts = attemptsOf(intent, form);
  if (!Number.isFinite(maxAttempts)) {
    maxAttempts = UNLIMITED_STANDIN;
    notes.push(`AWS SDKs need a number of attempts and the winner had no limit; ${maxAttempts} is used`);
  }
  const retryMode = found.throttle !== undefined ? "adaptive" : "standard";
  if (found.throttle !== undefined) {
    notes.push(
      `adaptive mode's client-side rate limiting is the closest to the simulated -throttle ${found.throttle}, not the same algorithm`,
    );
  }
  if (found.budget !== "aws") {
    notes.push(
      "standard mode adds AWS's retry quota (500 tokens per client, 5 per retry, 10 per timeout), a budget the simulation did not have",
    );
  }
  const exact = form.jitter === "full" && form.firstMs === AWS_STANDARD.baseMs && form.maxMs === AWS_STANDARD.capMs;
  if (!exact) notes.push("the SDK's own backoff is full jitter on 100 ms x 2^n up to 20 s; aws-sdk.ts sets the winner's waits instead");
  notes.push(...unexpressed(intent, "the AWS SDK", ["budget", "throttle"]));
  return {
    id: "aws",
    title: "AWS SDK client settings (also AWS_RETRY_MODE, AWS_MAX_ATTEMPTS)",
    file: "aws-sdk.json",
    language: "json",
    text: `${JSON.stringify({ retryMode, maxAttempts }, null, 2)}\n`,
    notes,
  };
}

export const awsSettingsRenderer: SnippetRenderer = { id: "aws", writesHedging: false, render: awsSettings };
