import {
  attemptsOf,
  comment,
  meanWaits,
  mechanisms,
  type RetryIntent,
  round3,
  shapeOf,
  type Snippet,
  type SnippetRenderer,
  unexpressed,
} from "./shared.ts";

/*
 * p-retry, https://github.com/sindresorhus/p-retry: { retries, factor, minTimeout,
 * maxTimeout, randomize } (retries may be Infinity; randomize multiplies by 1 to 2).
 */

function pRetryCode(intent: RetryIntent): Snippet {
  const form = shapeOf(intent);
  const notes = [...form.notes];
  const attempts = attemptsOf(intent, form);
  const randomize = form.jitter !== "none";
  // p-retry waits min(minTimeout x factor^(n-1), maxTimeout), times a random 1 to 2 before the cap when randomized (mean 1.5).
  const means = meanWaits(form);
  const minTimeout = round3(randomize ? means.initialMs / 1.5 : form.firstMs);
  const maxTimeout = round3(means.maxMs);
  if (randomize)
    notes.push(
      "p-retry's jitter multiplies by a random 1 to 2 before its cap; minTimeout and maxTimeout are set so that the average first wait and the average capped wait match (at the cap p-retry's waits are not jittered)",
    );
  const retries = Number.isFinite(attempts) ? String(Math.max(0, attempts - 1)) : "Number.POSITIVE_INFINITY";
  if (intent.budget !== undefined || mechanisms(intent).budget !== undefined)
    notes.push("p-retry has no retry budget; the winner's budget is left out");
  notes.push(...unexpressed(intent, "p-retry", ["budget"]));
  const lines = [
    "// p-retry: the winner's waits as retries, factor, minTimeout and maxTimeout.",
    ...comment(notes),
    'import pRetry from "p-retry";',
    "",
    "export function withRetries<T>(operation: () => Promise<T>): Promise<T> {",
    "  return pRetry(operation, {",
    `    retries: ${retries},`,
    `    factor: ${form.multiplier},`,
    `    minTimeout: ${minTimeout},`,
    `    maxTimeout: ${maxTimeout},`,
    `    randomize: ${randomize},`,
    "  });",
    "}",
  ];
  return { id: "p-retry", title: "p-retry", file: "p-retry.ts", language: "typescript", text: `${lines.join("\n")}\n`, notes };
}

export const pRetryRenderer: SnippetRenderer = { id: "p-retry", writesHedging: false, render: pRetryCode };
