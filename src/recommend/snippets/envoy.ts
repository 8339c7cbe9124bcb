import {
  attemptsOf,
  mechanisms,
  parameter,
  protoDuration,
  type RetryIntent,
  shapeOf,
  type Snippet,
  type SnippetRenderer,
  UNLIMITED_STANDIN,
  unexpressed,
} from "./shared.ts";

/*
 * Envoy API v3: config.route.v3.RetryPolicy (retry_on, num_retries, per_try_timeout,
 * retry_back_off {base_interval, max_interval}) and config.cluster.v3.CircuitBreakers
 * (thresholds[].retry_budget {budget_percent {value}, min_retry_concurrency}),
 * https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/route/v3/route_components.proto and
 * https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/cluster/v3/circuit_breaker.proto
 */

function envoyConfig(intent: RetryIntent): Snippet {
  const form = shapeOf(intent);
  const notes = [...form.notes];
  const attempts = attemptsOf(intent, form);
  let retries = attempts - 1;
  if (!Number.isFinite(retries)) {
    retries = UNLIMITED_STANDIN - 1;
    notes.push(`Envoy needs a number of retries and the winner had no limit; ${retries} is used`);
  }
  // Envoy draws the wait uniformly in [0, (2^n - 1) x base_interval), capped at max_interval.
  const scale = form.jitter === "full" ? 1 : 2;
  if (form.jitter !== "full")
    notes.push("Envoy's backoff is always fully jittered; its intervals are twice the winner's waits so the average matches");
  if (form.multiplier !== 2) notes.push(`Envoy's backoff doubles each time; the winner grew ${form.multiplier}x`);
  const found = mechanisms(intent);
  const percent = found.budget === "envoy" ? (parameter(intent, "budget", "percent") ?? 20) : 20;
  const minConcurrency = found.budget === "envoy" ? (parameter(intent, "budget", "concurrency") ?? 3) : 3;
  if (found.budget !== "envoy") {
    notes.push(
      intent.budget !== undefined || found.budget !== undefined
        ? "Envoy's retry budget limits concurrent retries to a share of active requests, not the simulated token budget; Envoy's defaults (20 %, 3) are shown as the closest"
        : "the winner had no retry budget; Envoy's defaults (20 %, 3) are shown because without a retry_budget Envoy caps concurrent retries at max_retries (3), a limit the simulation did not have",
    );
  }
  notes.push(...unexpressed(intent, "Envoy", ["budget"]));
  const lines = [
    "# Route configuration (RDS or route_config): the route's retry policy.",
    "name: local_route",
    "virtual_hosts:",
    "  - name: backend",
    '    domains: ["*"]',
    "    routes:",
    '      - match: { prefix: "/" }',
    "        route:",
    "          cluster: backend",
    "          # The simulated client had no deadline over all attempts; 0s disables Envoy's 15 s default.",
    "          timeout: 0s",
  ];
  if (retries >= 1) {
    lines.push(
      "          retry_policy:",
      '            retry_on: "5xx,reset,connect-failure"',
      `            num_retries: ${retries}`,
      `            per_try_timeout: ${protoDuration(intent.timeoutMs)}`,
      "            retry_back_off:",
      `              base_interval: ${protoDuration(form.firstMs * scale)}`,
      `              max_interval: ${protoDuration(form.maxMs * scale)}`,
    );
  } else {
    lines.push("          # The winner does not retry: no retry_policy.");
    notes.push("the winner does not retry: the route has no retry_policy");
  }
  lines.push(
    "---",
    "# Cluster: the retry budget, in its circuit breakers.",
    "name: backend",
    "circuit_breakers:",
    "  thresholds:",
    "    - priority: DEFAULT",
    "      retry_budget:",
    "        budget_percent:",
    `          value: ${percent.toFixed(1)}`,
    `        min_retry_concurrency: ${Math.round(minConcurrency)}`,
  );
  return {
    id: "envoy",
    title: "Envoy route retry_policy and cluster retry_budget",
    file: "envoy.yaml",
    language: "yaml",
    text: `${lines.join("\n")}\n`,
    notes,
  };
}

export const envoyRenderer: SnippetRenderer = { id: "envoy", writesHedging: false, render: envoyConfig };
