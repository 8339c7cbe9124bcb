import type { Counter, Registry } from "prom-client";
import { onFirstUse } from "../runtime/on-first-use.ts";
import type { ServiceSnapshot } from "../model/service-queue.ts";
import type { ServerModel, UpstreamSnapshot } from "../model/servers/server-model.ts";
import { type ActiveFault, conditionsOfActive } from "../model/faults/control.ts";
import { FAULT_KIND_DEFINITIONS } from "../model/faults/kinds.ts";
import { NORMAL_CONDITIONS } from "../model/faults/kind.ts";
import { LATENCY_BUCKETS_SECONDS, METRIC_PREFIX } from "../runtime/metrics-endpoint.ts";

const promClient = onFirstUse<typeof import("prom-client")>("prom-client");

const name = (suffix: string) => `${METRIC_PREFIX}server_${suffix}`;

/** How a middle tier's attempts upstream ended: the label values of `server_upstream_attempts_total`. */
const UPSTREAM_RESULTS = [
  ["ok", "attemptsOk"],
  ["error", "attemptsError"],
  ["timedout", "attemptsTimedout"],
] as const satisfies readonly (readonly [string, keyof UpstreamSnapshot])[];

type Mirror = (counter: Counter<string>, key: string, total: number, labels?: Record<string, string>) => void;

/** How each request left the service queue; the label values of `server_requests_total`. */
const OUTCOMES = ["served", "abandoned", "cancelled", "shed", "expired"] as const satisfies readonly (keyof ServiceSnapshot)[];

export interface ServerMetrics {
  /** A registry of the server's own (not prom-client's global one): tests run servers side by side. */
  readonly registry: Registry;
  /** A request answered after `seconds` in service. */
  observeServed(seconds: number): void;
}

/**
 * The server's Prometheus series. Counters and gauges are read from the server model
 * when scraped, the very numbers its report line prints; only the latency histogram is
 * fed request by request. A model with threads and a queue has gauges for them too.
 * `limit` is the concurrency above which the model is over its tipping point for the
 * verdict (the exponential model's -limit).
 */
export function serverMetrics(
  queue: ServerModel,
  limit: number,
  openConnections: () => number,
  activeFaults: () => readonly ActiveFault[] | undefined = () => undefined,
): ServerMetrics {
  const registry = new (promClient().Registry)();
  const mirror = totalsMirror();
  requestCounters(registry, queue, mirror);
  serviceGauges(registry, queue, limit);
  if (queue.snapshot().threads !== undefined) threadPoolGauges(registry, queue);
  if (queue.snapshot().upstream !== undefined) upstreamMetrics(registry, queue, mirror);
  if (activeFaults() !== undefined) faultGauge(registry, activeFaults);
  readGauge(registry, "open_connections", "Client connections open now", openConnections);
  const latency = new (promClient().Histogram)({
    name: name("request_duration_seconds"),
    help: "Time in service of the requests answered (served), seconds",
    buckets: LATENCY_BUCKETS_SECONDS,
    registers: [registry],
  });
  return { registry, observeServed: (seconds) => latency.observe(seconds) };
}

/** Counters mirror the queue's totals: each scrape adds what was counted since the last one. */
function totalsMirror(): Mirror {
  const exported = new Map<string, number>();
  return (counter, key, total, labels = {}) => {
    const delta = total - (exported.get(key) ?? 0);
    if (delta > 0) counter.inc(labels, delta);
    exported.set(key, total);
  };
}

/** A counter that mirrors the total `read` returns at each scrape, under `key`. */
function mirroredCounter(registry: Registry, mirror: Mirror, suffix: string, help: string, key: string, read: () => number): void {
  new (promClient().Counter)({
    name: name(suffix),
    help,
    registers: [registry],
    collect() {
      mirror(this, key, read());
    },
  });
}

/** A gauge set to what `read` returns at each scrape. */
/** How a gauge adds up over a server's processes (-workers): counts add (sum), a figure every process shares does not. */
type Aggregator = "sum" | "max" | "first";

function readGauge(registry: Registry, suffix: string, help: string, read: () => number, aggregator: Aggregator = "sum"): void {
  new (promClient().Gauge)({
    name: name(suffix),
    help,
    registers: [registry],
    aggregator,
    collect() {
      this.set(read());
    },
  });
}

/** Requests by how they left the service queue, those admitted, and those answered 500 on purpose. */
function requestCounters(registry: Registry, queue: ServerModel, mirror: Mirror): void {
  const requests = new (promClient().Counter)({
    name: name("requests_total"),
    help:
      "Requests by how they ended: served (client still waiting), abandoned (completed after the client left), " +
      "cancelled (dropped on disconnect), shed (503 at once), expired (past the deadline the client sent)",
    labelNames: ["outcome"],
    registers: [registry],
    collect() {
      const snapshot = queue.snapshot();
      for (const outcome of OUTCOMES) mirror(this, outcome, snapshot[outcome], { outcome });
    },
  });
  // Zero rather than absent before the first of each, so that rate() works from the start.
  for (const outcome of OUTCOMES) requests.inc({ outcome }, 0);
  mirroredCounter(registry, mirror, "admitted_total", "Requests taken into service", "admitted", () => queue.snapshot().admitted);
  mirroredCounter(
    registry,
    mirror,
    "errors_injected_total",
    "Of the requests served, those answered 500 on purpose (-error-rate)",
    "errorsInjected",
    () => queue.snapshot().errorsInjected,
  );
}

/** What is in service now, the delay the model gives it, and the concurrency limit. */
function serviceGauges(registry: Registry, queue: ServerModel, limit: number): void {
  readGauge(
    registry,
    "abandoned_in_service",
    "Requests in service now for a client that has gone away: work done for nobody",
    () => queue.snapshot().abandonedInService,
  );
  readGauge(registry, "requests_in_service", "Requests in service now (the concurrency of the report line)", () => queue.concurrency);
  readGauge(
    registry,
    "modelled_delay_seconds",
    "The delay the latency model gives the requests in service now (+Inf once it outgrows every number)",
    () => queue.lastDelayMs / 1000,
    // Each process's is the curve's at the whole server's concurrency (-workers), as last it saw it.
    "max",
  );
  new (promClient().Gauge)({
    name: name("concurrency_limit"),
    help: "Requests in service before the delay starts to grow (-limit)",
    registers: [registry],
    aggregator: "first",
  }).set(limit);
}

/** The queue model's: its queue and threads now. */
function threadPoolGauges(registry: Registry, queue: ServerModel): void {
  readGauge(registry, "queue_length", "Queue model: requests waiting for a thread now", () => queue.snapshot().queueLength ?? 0);
  readGauge(registry, "threads_busy", "Queue model: threads serving a request now", () => queue.snapshot().threadsBusy ?? 0);
  readGauge(registry, "threads", "Queue model: threads in the pool (-threads)", () => queue.snapshot().threads ?? 0);
}

/** The gauge's help, from the kinds the control plays: each kind's clause of -faults' help, and its value when off. */
const FAULT_GAUGE_HELP =
  "Fault control (-admin-listen): the factor of each kind on now, its value when off in brackets: " +
  FAULT_KIND_DEFINITIONS.flatMap((definition) =>
    definition.condition === undefined ? [] : [`${definition.help} (${definition.condition.read(NORMAL_CONDITIONS)})`],
  ).join("; ");

/** The fault control's (-admin-listen): the factor of each fault kind on now. */
function faultGauge(registry: Registry, activeFaults: () => readonly ActiveFault[] | undefined): void {
  new (promClient().Gauge)({
    name: name("fault_factor"),
    help: FAULT_GAUGE_HELP,
    labelNames: ["kind"],
    registers: [registry],
    collect() {
      const conditions = conditionsOfActive(activeFaults() ?? []);
      for (const definition of FAULT_KIND_DEFINITIONS) {
        if (definition.condition !== undefined) this.set({ kind: definition.name }, definition.condition.read(conditions));
      }
    },
  });
}

/** A middle tier's (-upstream) series: its calls to the tier below, read from the model's snapshot as the line prints them. */
function upstreamMetrics(registry: Registry, queue: ServerModel, mirror: Mirror): void {
  const upstream = () => queue.snapshot().upstream!;
  const attempts = new (promClient().Counter)({
    name: name("upstream_attempts_total"),
    help: "Middle tier: attempts sent upstream (first attempts and retries) that ended, by result: ok, error (an error answer), timedout",
    labelNames: ["result"],
    registers: [registry],
    collect() {
      const totals = upstream();
      for (const [result, key] of UPSTREAM_RESULTS) mirror(this, `upstream-${result}`, totals[key], { result });
    },
  });
  for (const [result] of UPSTREAM_RESULTS) attempts.inc({ result }, 0);
  const counters = [
    [
      "upstream_requests_total",
      "Middle tier: first attempts sent upstream (its own user requests; k per request for a fan-out of k)",
      "requests",
    ],
    ["upstream_refused_total", "Middle tier: attempts its own throttle or open breaker refused (never sent)", "refused"],
    ["upstream_failures_total", "Middle tier: calls upstream that failed for good, answered 502", "failures"],
  ] as const;
  for (const [suffix, help, key] of counters) mirroredCounter(registry, mirror, suffix, help, `upstream-${key}`, () => upstream()[key]);
  readGauge(registry, "upstream_in_flight", "Middle tier: calls upstream in flight now, each holding a thread", () => upstream().inFlight);
}

/**
 * The Prometheus text of several processes' series (./server -workers), each read with
 * getMetricsAsJSON, added up by each series' aggregator.
 */
export async function aggregateMetrics(
  perProcess: Parameters<typeof import("prom-client").AggregatorRegistry.aggregate>[0],
): Promise<string> {
  return promClient().AggregatorRegistry.aggregate(perProcess).metrics();
}

/** The content type of the Prometheus text format, as prom-client serves it. */
export const metricsContentType = (): string => new (promClient().Registry)().contentType;
