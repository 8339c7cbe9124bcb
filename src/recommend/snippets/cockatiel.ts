import type { JitterForm } from "../../backoff/policies/wait-shape.ts";
import {
  attemptsOf,
  comment,
  mechanisms,
  NORMAL_HELPER,
  needsNormal,
  parameter,
  type RetryIntent,
  shapeOf,
  type Snippet,
  type SnippetRenderer,
  unexpressed,
  waitExpression,
} from "./shared.ts";

/*
 * cockatiel, https://github.com/connor4312/cockatiel: retry(handleAll, { maxAttempts, backoff })
 * where maxAttempts counts retries after the first call (default Infinity);
 * ExponentialBackoff { initialDelay, maxDelay, exponent, generator }, ConstantBackoff,
 * DelegateBackoff; circuitBreaker(handleAll, { halfOpenAfter, breaker }).
 */

/** cockatiel's generator for each jitter it draws itself. */
const GENERATORS: Partial<Record<JitterForm, string>> = { full: "fullJitterGenerator", equal: "halfJitterGenerator" };

function cockatielCode(intent: RetryIntent): Snippet {
  const form = shapeOf(intent);
  const notes = [...form.notes];
  const attempts = attemptsOf(intent, form);
  const imports = new Set(["handleAll", "retry"]);
  let backoff: string;
  // cockatiel's own generators draw full and half ("equal") jitter; any other waits are a DelegateBackoff's expression.
  const generator = GENERATORS[form.jitter];
  if (form.jitter === "none" && form.multiplier === 1) {
    imports.add("ConstantBackoff");
    backoff = `new ConstantBackoff(${form.firstMs})`;
  } else if (generator !== undefined) {
    imports.add("ExponentialBackoff").add(generator);
    backoff = `new ExponentialBackoff({ initialDelay: ${form.firstMs}, maxDelay: ${form.maxMs}, exponent: ${form.multiplier}, generator: ${generator} })`;
  } else {
    imports.add("DelegateBackoff");
    backoff = `new DelegateBackoff((context: { attempt: number }) => ${waitExpression(intent, "context.attempt")})`;
    if (form.jitter === "decorrelated")
      notes.push("DelegateBackoff is given the per-attempt ceiling of decorrelated jitter, not its dependence on the previous wait");
  }
  const options = [Number.isFinite(attempts) ? `maxAttempts: ${Math.max(0, attempts - 1)}` : undefined, `backoff: ${backoff}`].filter(
    (part) => part !== undefined,
  );
  if (attempts <= 1) notes.push("the winner does not retry: maxAttempts 0");
  const found = mechanisms(intent);
  const body: string[] = [`export const retryPolicy = retry(handleAll, { ${options.join(", ")} });`];
  if (found.breaker !== undefined) {
    const breaker = found.breaker === "sampling" ? "SamplingBreaker" : "ConsecutiveBreaker";
    imports.add("circuitBreaker").add(breaker).add("wrap");
    const threshold = parameter(intent, "breaker", "threshold");
    const halfOpenAfter = parameter(intent, "breaker", "half-open") ?? parameter(intent, "breaker", "open") ?? 10_000;
    const construction =
      breaker === "SamplingBreaker"
        ? `new SamplingBreaker({ threshold: ${threshold ?? 0.5}, duration: ${parameter(intent, "breaker", "window") ?? 10_000} })`
        : `new ConsecutiveBreaker(${threshold ?? 5})`;
    body.push(
      `export const breakerPolicy = circuitBreaker(handleAll, { halfOpenAfter: ${halfOpenAfter}, breaker: ${construction} });`,
      "export const policy = wrap(retryPolicy, breakerPolicy);",
    );
    if (threshold === undefined)
      notes.push(`the breaker's threshold was not found among the simulated flags; cockatiel's usual value is shown`);
  } else {
    body.push("export const policy = retryPolicy;");
  }
  if (intent.budget !== undefined || found.budget !== undefined)
    notes.push("cockatiel has no retry budget; the winner's budget is left out");
  notes.push(...unexpressed(intent, "cockatiel", ["breaker", "budget"]));
  const lines = [
    "// cockatiel: the winner as a retry policy (maxAttempts counts retries after the first call).",
    ...comment(notes),
    `import { ${[...imports].sort().join(", ")} } from "cockatiel";`,
    "",
    ...(needsNormal(intent) && imports.has("DelegateBackoff") ? [...NORMAL_HELPER, ""] : []),
    ...body,
  ];
  return { id: "cockatiel", title: "cockatiel", file: "cockatiel.ts", language: "typescript", text: `${lines.join("\n")}\n`, notes };
}

export const cockatielRenderer: SnippetRenderer = { id: "cockatiel", writesHedging: false, render: cockatielCode };
