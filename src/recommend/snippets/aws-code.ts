import {
  attemptsOf,
  comment,
  NORMAL_HELPER,
  needsNormal,
  type RetryIntent,
  shapeOf,
  type Snippet,
  type SnippetRenderer,
  UNLIMITED_STANDIN,
  unexpressed,
  waitExpression,
} from "./shared.ts";

/*
 * The winner's own waits in the AWS SDK for JavaScript v3: @smithy/util-retry's
 * ConfiguredRetryStrategy(maxAttempts, computeNextBackoffDelay), for the waits the SDKs'
 * settings (aws-settings.ts) cannot say.
 */

function awsCode(intent: RetryIntent): Snippet {
  const form = shapeOf(intent);
  const notes = [...form.notes];
  let maxAttempts = attemptsOf(intent, form);
  if (!Number.isFinite(maxAttempts)) {
    maxAttempts = UNLIMITED_STANDIN;
    notes.push(`the SDK needs a number of attempts and the winner had no limit; ${maxAttempts} is used`);
  }
  if (form.jitter === "decorrelated") {
    notes.push("decorrelated jitter draws from the previous wait, which the SDK does not pass; its per-attempt ceiling is used");
  }
  notes.push(...unexpressed(intent, "ConfiguredRetryStrategy", []));
  const lines = [
    "// AWS SDK for JavaScript v3: the winner's waits through a ConfiguredRetryStrategy.",
    ...comment(notes),
    'import { ConfiguredRetryStrategy } from "@smithy/util-retry";',
    "",
    ...(needsNormal(intent) ? [...NORMAL_HELPER, ""] : []),
    `/** Pass as \`retryStrategy\` to any client, e.g. new S3Client({ retryStrategy }). */`,
    "export const retryStrategy = new ConfiguredRetryStrategy(",
    `  ${maxAttempts},`,
    `  (attempt: number): number => ${waitExpression(intent, "attempt")},`,
    ");",
  ];
  return {
    id: "aws-code",
    title: "AWS SDK for JavaScript v3: the winner's backoff",
    file: "aws-sdk.ts",
    language: "typescript",
    text: `${lines.join("\n")}\n`,
    notes,
  };
}

export const awsCodeRenderer: SnippetRenderer = { id: "aws-code", writesHedging: false, render: awsCode };
