import type { BackoffPolicy } from "../../backoff/policy.ts";
import { policyDefinition } from "../../backoff/policies.ts";
import type { PolicyDefinition } from "../../backoff/policies/definition.ts";
import { comment, type RetryIntent, type Snippet, type SnippetRenderer, unexpressed } from "./shared.ts";

/* This project's own library, thundering-herd/backoff (src/backoff/index.ts): the winner exactly as simulated. */

function libraryCode(intent: RetryIntent): Snippet {
  const notes: string[] = [];
  const policy = intent.policy;
  const definition = policyDefinition(policy.kind) as PolicyDefinition<BackoffPolicy>;
  const factory = definition.libraryName;
  const fields = Object.entries(policy)
    .filter(([key]) => key !== "kind")
    .map(([key, value]) => `${key}: ${Array.isArray(value) ? `[${(value as number[]).join(", ")}]` : String(value)}`);
  const followsThinkTime = definition.firstWaitFollowsThinkTime;
  if (followsThinkTime !== false) {
    notes.push(
      `retry() has no think time: the ${policy.kind} policy's first wait grows from ${followsThinkTime.withoutThinkTime}, not from the user's think time`,
    );
  }
  const imports = new Set([factory, "retry", "type AttemptContext"]);
  const budget = intent.budget;
  const maxAttempts = Number.isFinite(intent.maxAttempts) ? String(intent.maxAttempts) : "Infinity";
  const lines = [
    "// thundering-herd/backoff: the winner, exactly as simulated.",
    ...comment([...notes, ...unexpressed(intent, "the backoff library", [])]),
  ];
  const body: string[] = [`const policy = ${factory}({ ${fields.join(", ")} });`, ""];
  if (budget === undefined) {
    body.push(
      "export function withRetries<T>(operation: (context: AttemptContext) => Promise<T>): Promise<T> {",
      `  return retry(operation, policy, { maxAttempts: ${maxAttempts} });`,
      "}",
    );
  } else {
    for (const name of ["retryBudget", "initialBudgetState", "budgetAfterFailure", "budgetAfterSuccess", "budgetAllowsRetry"])
      imports.add(name);
    body.push(
      `const budget = retryBudget({ maxTokens: ${budget.maxTokens}, tokenRatio: ${budget.tokenRatio} });`,
      "let tokens = initialBudgetState(budget);",
      "",
      "export function withRetries<T>(operation: (context: AttemptContext) => Promise<T>): Promise<T> {",
      "  const counted = async (context: AttemptContext): Promise<T> => {",
      "    try {",
      "      const result = await operation(context);",
      "      tokens = budgetAfterSuccess(budget, tokens);",
      "      return result;",
      "    } catch (error) {",
      "      tokens = budgetAfterFailure(budget, tokens);",
      "      throw error;",
      "    }",
      "  };",
      `  return retry(counted, policy, { maxAttempts: ${maxAttempts}, shouldRetry: () => budgetAllowsRetry(budget, tokens) });`,
      "}",
    );
  }
  const sorted = [...imports].sort((a, b) => a.replace(/^type /, "").localeCompare(b.replace(/^type /, "")));
  lines.push(`import { ${sorted.join(", ")} } from "thundering-herd/backoff";`, "", ...body);
  return {
    id: "thundering-herd",
    title: "thundering-herd/backoff (this project's library)",
    file: "thundering-herd.ts",
    language: "typescript",
    text: `${lines.join("\n")}\n`,
    notes: [...notes, ...unexpressed(intent, "the backoff library", [])],
  };
}

export const thunderingHerdRenderer: SnippetRenderer = { id: "thundering-herd", writesHedging: false, render: libraryCode };
