import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { budgetAllowsRetry, type RetryBudget } from "../backoff/budget.ts";
import type { ClientInstances } from "../model/client-instances.ts";
import type { HerdObserver } from "../model/attempt.ts";
import type { AttemptResult, LocalRefusal } from "../model/outcome.ts";
import { LATENCY_BUCKETS_SECONDS, METRIC_PREFIX } from "../runtime/metrics-endpoint.ts";

const name = (suffix: string) => `${METRIC_PREFIX}client_${suffix}`;

/** What the client's metrics read when scraped. */
export interface ClientMetricsSource {
  /** Closed users (-clients); undefined for open-loop arrivals. */
  readonly users: number | undefined;
  /** Attempts in flight now. */
  inFlight(): number;
  /** The client instances' protections (budgets, throttles, breakers), for their gauges; undefined when none is on. */
  instances(): ClientInstances | undefined;
  /** The gRPC-style retry budget (-budget grpc, -retry-budget), if that is the budget. */
  readonly budget: RetryBudget | undefined;
}

/**
 * A protection mechanism that limits retries, and the gauges that show its state. Only the
 * gRPC-style retry budget exists today; another mechanism (a circuit breaker, a client-wide
 * token bucket) adds an entry to PROTECTIONS below.
 */
interface Protection {
  readonly enabled: (source: ClientMetricsSource) => boolean;
  readonly register: (registry: Registry, source: ClientMetricsSource) => void;
}

const retryBudgetProtection: Protection = {
  enabled: (source) => source.budget !== undefined,
  register(registry, source) {
    const budget = source.budget!;
    const sum = () => {
      let tokens = 0;
      let exhausted = 0;
      const instances = source.instances();
      for (let instance = 0; instance < (instances?.count ?? 0); instance++) {
        const state = instances!.grpcBudgetState(instance);
        if (state === undefined) continue;
        tokens += state.tokens;
        if (!budgetAllowsRetry(budget, state)) exhausted++;
      }
      return { tokens, exhausted };
    };
    new Gauge({
      name: name("retry_budget_tokens"),
      help: "Retry-budget tokens held by all client instances together (gRPC retry throttling; one instance per user unless -instances)",
      registers: [registry],
      collect() {
        this.set(sum().tokens);
      },
    });
    new Gauge({
      name: name("retry_budget_max_tokens"),
      help: "Each client instance's retry-budget ceiling (-budget-tokens); retries stop below half of it",
      registers: [registry],
    }).set(budget.maxTokens);
    new Gauge({
      name: name("retry_budget_exhausted_users"),
      help: "Client instances (users, unless -instances) whose budget refuses retries now (tokens at or below half the ceiling)",
      registers: [registry],
      collect() {
        this.set(sum().exhausted);
      },
    });
  },
};

const PROTECTIONS: readonly Protection[] = [retryBudgetProtection];

export interface ClientMetrics {
  /** A registry of the client's own (not prom-client's global one): tests run clients side by side. */
  readonly registry: Registry;
  /** Counts every attempt, then passes it on to `inner` (the window statistics). */
  observer(inner: HerdObserver): HerdObserver;
}

/** The client's Prometheus series: attempts by outcome, retries, give-ups, latency, in flight, protections. */
export function clientMetrics(source: ClientMetricsSource): ClientMetrics {
  const registry = new Registry();
  const series = attemptSeries(registry);
  loadGauges(registry, source);
  // Zero rather than absent before the first of each, so that rate() works from the start.
  for (const outcome of ["ok", "error", "timedout"]) series.requests.inc({ outcome }, 0);
  for (const protection of PROTECTIONS) if (protection.enabled(source)) protection.register(registry, source);
  return { registry, observer: (inner) => countingObserver(series, inner) };
}

/** The series counted attempt by attempt. */
interface AttemptSeries {
  readonly requests: Counter<string>;
  readonly errors: Counter<string>;
  readonly attempts: Counter<string>;
  readonly notSent: Counter<string>;
  readonly retries: Counter<string>;
  readonly gaveUp: Counter<string>;
  readonly refused: Counter<string>;
  readonly latency: Histogram<string>;
}

/** The attempt series, registered in the order a scrape lists them. */
function attemptSeries(registry: Registry): AttemptSeries {
  return {
    requests: new Counter({
      name: name("requests_total"),
      help: "Attempts that ended, by outcome: ok (2xx), error (refused, reset, non-2xx, ...), timedout (no complete answer within -timeout)",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    errors: new Counter({
      name: name("errors_total"),
      help: "Attempts that ended in an error, by kind",
      labelNames: ["kind"],
      registers: [registry],
    }),
    attempts: new Counter({
      name: name("attempts_total"),
      help: "Attempts started, retries included (and tries that could not be sent, see not_sent_total)",
      registers: [registry],
    }),
    notSent: new Counter({
      name: name("not_sent_total"),
      help: "Attempts the client could not send (no file descriptor, no local port): held and sent again, never a server failure",
      registers: [registry],
    }),
    retries: new Counter({ name: name("retries_total"), help: "Attempts started that were retries", registers: [registry] }),
    gaveUp: new Counter({
      name: name("gave_up_total"),
      help: "Requests given up: a retry refused by the attempt limit, the budget or the policy",
      registers: [registry],
    }),
    refused: new Counter({
      name: name("refused_total"),
      help: "Attempts the client refused itself, never sent: throttled (adaptive throttle) or rejected (open circuit breaker)",
      labelNames: ["reason"],
      registers: [registry],
    }),
    latency: new Histogram({
      name: name("request_duration_seconds"),
      help: "Latency of the OK answers, seconds",
      buckets: LATENCY_BUCKETS_SECONDS,
      registers: [registry],
    }),
  };
}

/** The load now, read when scraped: attempts in flight, and the users when they are closed users. */
function loadGauges(registry: Registry, source: ClientMetricsSource): void {
  new Gauge({
    name: name("requests_in_flight"),
    help: "Attempts in flight now",
    registers: [registry],
    collect() {
      this.set(source.inFlight());
    },
  });
  if (source.users !== undefined)
    new Gauge({ name: name("users"), help: "Simulated users (-clients)", registers: [registry] }).set(source.users);
}

/** `inner`, with every attempt counted in `series` too. */
function countingObserver(series: AttemptSeries, inner: HerdObserver): HerdObserver {
  const ok = series.requests.labels({ outcome: "ok" });
  const error = series.requests.labels({ outcome: "error" });
  const timedout = series.requests.labels({ outcome: "timedout" });
  return {
    attemptStarted(isRetry: boolean, latenessMs: number) {
      inner.attemptStarted(isRetry, latenessMs);
      series.attempts.inc();
      if (isRetry) series.retries.inc();
    },
    attemptNotSent(isRetry: boolean) {
      inner.attemptNotSent(isRetry);
      series.notSent.inc();
    },
    attemptRefused(refusal: LocalRefusal) {
      inner.attemptRefused(refusal);
      series.refused.inc({ reason: refusal });
    },
    attemptEnded(result: AttemptResult, latencyMs: number) {
      inner.attemptEnded(result, latencyMs);
      if (result.outcome === "ok") {
        ok.inc();
        series.latency.observe(latencyMs / 1000);
      } else if (result.outcome === "timedout") {
        timedout.inc();
      } else {
        error.inc();
        series.errors.inc({ kind: result.errorKind ?? "other" });
      }
    },
    gaveUp() {
      inner.gaveUp();
      series.gaveUp.inc();
    },
    // Only when the inner observer asks for it: a herd tracks request times only then.
    ...(inner.requestEnded === undefined ? {} : { requestEnded: inner.requestEnded.bind(inner) }),
    ...(inner.requestStarted === undefined ? {} : { requestStarted: inner.requestStarted.bind(inner) }),
  };
}
