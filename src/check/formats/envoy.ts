import type { Document } from "yaml";
import { parseDuration } from "../../cli/duration.ts";
import type { FlagSettings } from "../../recommend/settings.ts";
import { type ConfigFormat, ConfigFileError, type ConfigReading, type PolicyReading, type Written } from "../format.ts";
import {
  appendYaml,
  deleteYaml,
  defaulted,
  effective,
  ENVOY_BASE_INTERVAL_MS,
  ENVOY_CIRCUIT_BREAKER_SOURCE,
  ENVOY_DEFAULT_MAX_RETRIES,
  ENVOY_MAX_INTERVAL_TIMES_BASE,
  ENVOY_RETRY_POLICY_SOURCE,
  ENVOY_ROUTER_SOURCE,
  ENVOY_SAYABLE,
  envoyBackoffProblem,
  envoyBackoffReadings,
  integerAt,
  isObject,
  type JsonObject,
  limitApproximation,
  limitSettings,
  listAt,
  ms,
  numberAt,
  objectAt,
  PolicyBuilder,
  protoDurationAt,
  protoDurationFor,
  type RetryLimit,
  sameFlag,
  sameLimit,
  setYaml,
  unlessShared,
  spliceDocuments,
  type TargetLimit,
  targetLimit,
  UINT32_MAX,
  unsayable,
  yamlDocuments,
  type YamlPath,
} from "./envoy-shared.ts";

/*
 * Envoy's own YAML: a bootstrap (static_resources), a RouteConfiguration, those two as documents
 * of one file (as choose writes them), or a bare retry_policy. Each route that forwards to a
 * cluster is one policy: its retry_policy (or its virtual host's), and the limit on retries in
 * progress of the cluster it names (circuit_breakers: retry_budget, else max_retries).
 */

const ROUTE_TIMEOUT_SOURCE =
  'Envoy API v3 "config.route.v3.RouteAction" timeout, https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/route/v3/route_components.proto#envoy-v3-api-field-config-route-v3-routeaction-timeout';
/** Envoy's route timeout when a route sets none. */
const ROUTE_TIMEOUT_DEFAULT_MS = 15_000;
/** What write adds as retry_on when it makes a route retry that did not: the conditions choose's Envoy snippet uses. */
const DEFAULT_RETRY_ON = "5xx,reset,connect-failure";

const RETRY_POLICY_FIELDS: Readonly<Record<string, string>> = {
  retry_on: "which failures are retried; our model has one kind of failure, and retries every failure",
  retriable_status_codes: "which status codes are retried; our model retries every failure",
  retriable_headers: "which responses are retried; our model retries every failure",
  retriable_request_headers: "which requests may be retried; our model may retry every request",
  retry_host_predicate: "which host a retry goes to; our model has one server",
  host_selection_retry_max_attempts: "how often a retry's host is chosen again; our model has one server",
  retry_priority: "which priority level a retry goes to; our model has one server",
  rate_limited_retry_back_off: "waits read from Retry-After headers; our model's server sends none to Envoy's retries",
  per_try_idle_timeout: "an idle timeout per attempt; our model's attempts are never idle midway",
  retry_options_predicates: "changes a request between retries; our model sends the same request",
};

const THRESHOLD_FIELDS: Readonly<Record<string, string>> = {
  max_connections: "connections to the cluster; our model's clients are not limited by connections",
  max_pending_requests: "requests queued for a connection; our model does not queue in the proxy",
  max_requests: "requests in progress to the cluster; our model does not limit them in the proxy",
  track_remaining: "statistics only",
  max_connection_pools: "connection pools; not modelled",
  priority: "the routing priority these thresholds apply to (the route's own is read)",
};

interface ClusterSite {
  readonly doc: number;
  readonly path: YamlPath;
  readonly value: JsonObject;
}

/** One route (or a bare retry_policy) and where its parts are. */
interface RouteSite {
  readonly name: string;
  readonly doc: number;
  /** The RouteAction's path (`routes[j].route`), or undefined for a bare retry_policy. */
  readonly actionPath: YamlPath | undefined;
  readonly action: JsonObject | undefined;
  /** Where the retry_policy that applies is (the route's, else its virtual host's); undefined when none does. */
  readonly policyPath: YamlPath | undefined;
  readonly policy: JsonObject | undefined;
  readonly clusterName: string | undefined;
  readonly cluster: ClusterSite | undefined;
}

interface Parsed {
  readonly documents: ReturnType<typeof yamlDocuments>;
  readonly sites: readonly RouteSite[];
}

const pathText = (path: YamlPath): string =>
  path.map((part, index) => (typeof part === "number" ? `[${part}]` : `${index === 0 ? "" : "."}${part}`)).join("");

/** Every object in `value` with its path, depth first. */
function* walk(value: unknown, path: YamlPath): Generator<{ value: JsonObject; path: YamlPath }> {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) yield* walk(item, [...path, index]);
  } else if (isObject(value)) {
    yield { value, path };
    for (const [key, item] of Object.entries(value)) yield* walk(item, [...path, key]);
  }
}

const CLUSTER_KEYS = ["circuit_breakers", "connect_timeout", "load_assignment", "lb_policy", "type"];
const BARE_POLICY_KEYS = ["num_retries", "retry_on", "retry_back_off", "per_try_timeout"];

function clustersIn(roots: readonly unknown[]): Map<string, ClusterSite> {
  const clusters = new Map<string, ClusterSite>();
  roots.forEach((root, doc) => {
    for (const { value, path } of walk(root, [])) {
      const listed = path.length >= 2 && path.at(-2) === "clusters";
      const whole = path.length === 0 && CLUSTER_KEYS.some((key) => key in value) && !("virtual_hosts" in value);
      if ((listed || whole) && typeof value.name === "string" && !clusters.has(value.name)) clusters.set(value.name, { doc, path, value });
    }
  });
  return clusters;
}

function routeSites(roots: readonly unknown[], clusters: ReadonlyMap<string, ClusterSite>): RouteSite[] {
  const sites: RouteSite[] = [];
  roots.forEach((root, doc) => {
    for (const { value, path } of walk(root, [])) {
      if (!("virtual_hosts" in value)) continue;
      const hosts = listAt(value.virtual_hosts, pathText([...path, "virtual_hosts"]), "Envoy's virtual hosts");
      hosts.forEach((host, hostIndex) => {
        const hostPath = [...path, "virtual_hosts", hostIndex];
        const hostObject = objectAt(host, pathText(hostPath), "a virtual host");
        const routes = hostObject.routes === undefined ? [] : listAt(hostObject.routes, pathText([...hostPath, "routes"]), "routes");
        routes.forEach((route, routeIndex) => {
          const routePath = [...hostPath, "routes", routeIndex];
          const routeObject = objectAt(route, pathText(routePath), "a route");
          if (routeObject.route === undefined) return;
          const action = objectAt(routeObject.route, pathText([...routePath, "route"]), "a route action");
          const own = action.retry_policy !== undefined;
          const policyPath = own
            ? [...routePath, "route", "retry_policy"]
            : hostObject.retry_policy !== undefined
              ? [...hostPath, "retry_policy"]
              : undefined;
          const policy = own ? action.retry_policy : hostObject.retry_policy;
          const clusterName = typeof action.cluster === "string" ? action.cluster : undefined;
          const routeName = typeof routeObject.name === "string" ? `route "${routeObject.name}"` : `routes[${routeIndex}]`;
          sites.push({
            name: `${routeName} of virtual host "${String(hostObject.name ?? hostIndex)}"`,
            doc,
            actionPath: [...routePath, "route"],
            action,
            policyPath,
            policy: policy === undefined ? undefined : objectAt(policy, pathText(policyPath!), "Envoy's RetryPolicy"),
            clusterName,
            cluster: clusterName === undefined ? undefined : clusters.get(clusterName),
          });
        });
      });
    }
  });
  return sites;
}

/** A document that is a retry_policy alone, or `retry_policy:` and nothing else. */
function barePolicy(roots: readonly unknown[]): RouteSite | undefined {
  for (const [doc, root] of roots.entries()) {
    if (!isObject(root)) continue;
    const keys = Object.keys(root);
    const wrapped = keys.length === 1 && keys[0] === "retry_policy";
    if (!wrapped && !BARE_POLICY_KEYS.some((key) => key in root)) continue;
    const policyPath = wrapped ? ["retry_policy"] : [];
    const policy = objectAt(wrapped ? root.retry_policy : root, pathText(policyPath) || "retry_policy", "Envoy's RetryPolicy");
    return {
      name: "retry_policy",
      doc,
      actionPath: undefined,
      action: undefined,
      policyPath,
      policy,
      clusterName: undefined,
      cluster: undefined,
    };
  }
  return undefined;
}

function parse(text: string): Parsed {
  const documents = yamlDocuments(text);
  const roots = documents.map((document) => document.toJS() as unknown);
  const sites = routeSites(roots, clustersIn(roots));
  const bare = sites.length === 0 ? barePolicy(roots) : undefined;
  if (bare !== undefined) sites.push(bare);
  if (sites.length === 0) {
    throw new ConfigFileError(
      "no Envoy route or retry_policy found: expected a bootstrap (static_resources), a RouteConfiguration (virtual_hosts) or a retry_policy",
    );
  }
  return { documents, sites };
}

/** A field's name as the reading shows it: its path, with the document's number when the file has several. */
function namer(documents: number, doc: number) {
  return (path: YamlPath): string => `${documents > 1 ? `document ${doc + 1}: ` : ""}${pathText(path) || "retry_policy"}`;
}

/** The file's own values of a retry_policy, checked. */
interface PolicyValues {
  readonly numRetries: number | undefined;
  readonly retryOn: string | undefined;
  readonly baseMs: number | undefined;
  readonly maxMs: number | undefined;
  readonly perTryMs: number | undefined;
}

function policyValues(policy: JsonObject | undefined, field: (path: YamlPath) => string, at: YamlPath): PolicyValues {
  if (policy === undefined) return { numRetries: 0, retryOn: undefined, baseMs: undefined, maxMs: undefined, perTryMs: undefined };
  const backOff =
    policy.retry_back_off === undefined ? undefined : objectAt(policy.retry_back_off, field([...at, "retry_back_off"]), "RetryBackOff");
  if (backOff !== undefined && backOff.base_interval === undefined) {
    throw new ConfigFileError(
      `${field([...at, "retry_back_off", "base_interval"])}: missing; Envoy requires it when retry_back_off is set`,
    );
  }
  const baseMs =
    backOff === undefined ? undefined : protoDurationAt(backOff.base_interval, field([...at, "retry_back_off", "base_interval"]));
  const maxMs =
    backOff?.max_interval === undefined
      ? undefined
      : protoDurationAt(backOff.max_interval, field([...at, "retry_back_off", "max_interval"]));
  if (maxMs !== undefined && baseMs !== undefined && maxMs < baseMs) {
    throw new ConfigFileError(
      `${field([...at, "retry_back_off", "max_interval"])}: must be at least base_interval (${ms(baseMs)}), got ${ms(maxMs)}`,
    );
  }
  if (policy.retry_on !== undefined && typeof policy.retry_on !== "string") {
    throw new ConfigFileError(
      `${field([...at, "retry_on"])}: must be a comma-separated list of conditions, got ${JSON.stringify(policy.retry_on)}`,
    );
  }
  return {
    numRetries: policy.num_retries === undefined ? undefined : integerAt(policy.num_retries, field([...at, "num_retries"]), 0),
    retryOn: policy.retry_on,
    baseMs,
    maxMs,
    perTryMs: policy.per_try_timeout === undefined ? undefined : protoDurationAt(policy.per_try_timeout, field([...at, "per_try_timeout"])),
  };
}

function readAttempts(builder: PolicyBuilder, site: RouteSite, values: PolicyValues, field: (path: YamlPath) => string): void {
  const at = site.policyPath;
  if (at === undefined) {
    builder.read(field([...site.actionPath!, "retry_policy"]), "absent", { "max-attempts": "1" }, ENVOY_ROUTER_SOURCE);
    return;
  }
  const retries = values.numRetries ?? 1;
  const text = values.numRetries === undefined ? defaulted("1") : String(site.policy!.num_retries);
  builder.read(field([...at, "num_retries"]), text, { "max-attempts": String(retries + 1) }, ENVOY_ROUTER_SOURCE);
  if (values.retryOn === undefined || values.retryOn.trim() === "") {
    builder.read(
      field([...at, "retry_on"]),
      values.retryOn === undefined ? "absent" : '""',
      { "max-attempts": "1" },
      ENVOY_RETRY_POLICY_SOURCE,
      "with no retry_on condition Envoy retries nothing (unless a request's x-envoy-retry-on header asks)",
    );
  }
}

function readTimeout(builder: PolicyBuilder, site: RouteSite, values: PolicyValues, field: (path: YamlPath) => string): void {
  const routeTimeout = site.action?.timeout;
  const routeMs =
    routeTimeout === undefined ? ROUTE_TIMEOUT_DEFAULT_MS : protoDurationAt(routeTimeout, field([...site.actionPath!, "timeout"]), false);
  if (routeTimeout !== undefined) {
    builder.skip(
      field([...site.actionPath!, "timeout"]),
      routeTimeout,
      "a deadline over all attempts together; our model times each attempt out, with no deadline over them",
    );
  }
  if (values.perTryMs !== undefined && site.policyPath !== undefined) {
    const capped = routeMs > 0 && values.perTryMs > routeMs;
    builder.read(
      field([...site.policyPath, "per_try_timeout"]),
      String(site.policy!.per_try_timeout),
      { timeout: ms(capped ? routeMs : values.perTryMs) },
      ENVOY_RETRY_POLICY_SOURCE,
      capped ? `above the route's timeout (${ms(routeMs)}), which ends every attempt first` : undefined,
    );
    return;
  }
  const where =
    site.policyPath === undefined
      ? field([...(site.actionPath ?? []), "retry_policy", "per_try_timeout"])
      : field([...site.policyPath, "per_try_timeout"]);
  const routeText = site.action === undefined ? "the route's timeout, not in this file" : "the route's timeout";
  if (routeMs === 0) {
    builder.read(
      where,
      defaulted(`${routeText}: 0s, none`),
      {},
      ROUTE_TIMEOUT_SOURCE,
      "Envoy then has no timeout on an attempt; our model has one: the scenario's -timeout applies",
    );
    return;
  }
  const shownTimeout = routeTimeout === undefined ? `${routeText}, default ${ms(routeMs)}` : `${routeText}, ${ms(routeMs)}`;
  builder.read(
    where,
    defaulted(shownTimeout),
    { timeout: ms(routeMs) },
    ROUTE_TIMEOUT_SOURCE,
    "the route's timeout is a deadline over all attempts; the first attempt that takes it all leaves none for retries",
  );
}

/** The cluster's thresholds for the route's priority, and where they are. */
function thresholdsOf(site: RouteSite, field: (path: YamlPath) => string): { index: number; value: JsonObject } | undefined {
  const breakers = site.cluster?.value.circuit_breakers;
  if (breakers === undefined) return undefined;
  const path = [...site.cluster!.path, "circuit_breakers"];
  const list = listAt(objectAt(breakers, field(path), "CircuitBreakers").thresholds ?? [], field([...path, "thresholds"]), "thresholds");
  const priority = site.action?.priority ?? "DEFAULT";
  const index = list.findIndex((item) => isObject(item) && (item.priority ?? "DEFAULT") === priority);
  return index < 0 ? undefined : { index, value: objectAt(list[index], field([...path, "thresholds", index]), "Thresholds") };
}

function readLimit(builder: PolicyBuilder, site: RouteSite, documents: number): RetryLimit {
  const clusterField = site.cluster === undefined ? undefined : namer(documents, site.cluster.doc);
  const thresholds = clusterField === undefined ? undefined : thresholdsOf(site, clusterField);
  if (thresholds === undefined || clusterField === undefined) {
    const where =
      site.cluster === undefined
        ? `cluster ${site.clusterName === undefined ? "(none named)" : `"${site.clusterName}"`}: not in this file`
        : `cluster "${site.clusterName}": no thresholds`;
    const limit: RetryLimit = { kind: "max-retries", maxRetries: ENVOY_DEFAULT_MAX_RETRIES };
    builder.read(
      `${where}, circuit_breakers.thresholds[].max_retries`,
      defaulted(String(ENVOY_DEFAULT_MAX_RETRIES)),
      limitSettings(limit),
      ENVOY_CIRCUIT_BREAKER_SOURCE,
      limitApproximation(limit),
    );
    return limit;
  }
  const at = [...site.cluster!.path, "circuit_breakers", "thresholds", thresholds.index];
  const { value } = thresholds;
  for (const key of Object.keys(value)) {
    if (key === "retry_budget" || key === "max_retries") continue;
    if (key !== "priority")
      builder.skip(
        clusterField([...at, key]),
        value[key],
        THRESHOLD_FIELDS[key] ?? "not a field of Envoy's Thresholds; Envoy rejects the configuration",
      );
  }
  if (value.retry_budget !== undefined) {
    if (value.max_retries !== undefined)
      builder.skip(clusterField([...at, "max_retries"]), value.max_retries, "overridden by retry_budget (circuit_breaker.proto)");
    return readBudget(
      builder,
      objectAt(value.retry_budget, clusterField([...at, "retry_budget"]), "RetryBudget"),
      [...at, "retry_budget"],
      clusterField,
    );
  }
  const maxRetries =
    value.max_retries === undefined ? ENVOY_DEFAULT_MAX_RETRIES : integerAt(value.max_retries, clusterField([...at, "max_retries"]), 0);
  const limit: RetryLimit = { kind: "max-retries", maxRetries };
  builder.read(
    clusterField([...at, "max_retries"]),
    value.max_retries === undefined ? defaulted(String(ENVOY_DEFAULT_MAX_RETRIES)) : String(value.max_retries),
    limitSettings(limit),
    ENVOY_CIRCUIT_BREAKER_SOURCE,
    limitApproximation(limit),
  );
  return limit;
}

function readBudget(builder: PolicyBuilder, budget: JsonObject, at: YamlPath, field: (path: YamlPath) => string): RetryLimit {
  const percentObject =
    budget.budget_percent === undefined
      ? undefined
      : objectAt(budget.budget_percent, field([...at, "budget_percent"]), "a Percent, { value: 20 }");
  const percent =
    percentObject === undefined ? 20 : numberAt(percentObject.value ?? 0, field([...at, "budget_percent", "value"]), { min: 0, max: 100 });
  const minConcurrency =
    budget.min_retry_concurrency === undefined ? 3 : integerAt(budget.min_retry_concurrency, field([...at, "min_retry_concurrency"]), 0);
  const limit: RetryLimit = { kind: "budget", percent, minConcurrency };
  const settings = limitSettings(limit);
  builder.read(
    field([...at, "budget_percent", "value"]),
    percentObject === undefined ? defaulted("20") : String(percent),
    { budget: "envoy", "budget-percent": settings["budget-percent"]! },
    ENVOY_CIRCUIT_BREAKER_SOURCE,
    limitApproximation(limit),
  );
  builder.read(
    field([...at, "min_retry_concurrency"]),
    budget.min_retry_concurrency === undefined ? defaulted("3") : String(minConcurrency),
    { "budget-min-concurrency": String(minConcurrency) },
    ENVOY_CIRCUIT_BREAKER_SOURCE,
  );
  for (const key of Object.keys(budget)) {
    if (key !== "budget_percent" && key !== "min_retry_concurrency")
      builder.skip(
        field([...at, key]),
        budget[key],
        key === "budget_interval"
          ? "counts requests over an interval; our envoy budget counts those in progress"
          : "not a field of Envoy's RetryBudget; Envoy rejects the configuration",
      );
  }
  return limit;
}

function readSite(parsed: Parsed, site: RouteSite): PolicyReading {
  const builder = new PolicyBuilder();
  const field = namer(parsed.documents.length, site.doc);
  const at = site.policyPath ?? [];
  const values = policyValues(site.policy, field, at);
  readAttempts(builder, site, values, field);
  const backOffPath = [...(site.policyPath ?? [...(site.actionPath ?? []), "retry_policy"]), "retry_back_off"];
  const backOff = isObject(site.policy?.retry_back_off) ? site.policy.retry_back_off : {};
  const interval = (key: "base_interval" | "max_interval", msValue: number | undefined) => ({
    field: field([...backOffPath, key]),
    ms: msValue,
    source: ENVOY_RETRY_POLICY_SOURCE,
    ...(msValue === undefined ? {} : { text: String(backOff[key]) }),
  });
  envoyBackoffReadings(builder, interval("base_interval", values.baseMs), interval("max_interval", values.maxMs));
  readTimeout(builder, site, values, field);
  readLimit(builder, site, parsed.documents.length);
  skipUnmodeled(builder, site, field, namer(parsed.documents.length, site.cluster?.doc ?? 0));
  return builder.build(site.name);
}

function skipUnmodeled(
  builder: PolicyBuilder,
  site: RouteSite,
  field: (path: YamlPath) => string,
  clusterField: (path: YamlPath) => string,
): void {
  const policy = site.policy ?? {};
  for (const key of Object.keys(policy)) {
    if (key === "num_retries" || key === "per_try_timeout" || key === "retry_back_off") continue;
    if (key === "retry_on" && (policy.retry_on === undefined || String(policy.retry_on).trim() === "")) continue;
    builder.skip(
      field([...site.policyPath!, key]),
      policy[key],
      RETRY_POLICY_FIELDS[key] ?? "not a field of Envoy's RetryPolicy; Envoy rejects the configuration",
    );
  }
  const backOff = isObject(policy.retry_back_off) ? policy.retry_back_off : {};
  for (const key of Object.keys(backOff)) {
    if (key !== "base_interval" && key !== "max_interval")
      builder.skip(
        field([...site.policyPath!, "retry_back_off", key]),
        backOff[key],
        "not a field of Envoy's RetryBackOff; Envoy rejects the configuration",
      );
  }
  if (site.action?.hedge_policy !== undefined)
    builder.skip(
      field([...site.actionPath!, "hedge_policy"]),
      site.action.hedge_policy,
      "Envoy's hedging on a per-try timeout; not modelled",
    );
  if (site.action !== undefined && site.clusterName === undefined)
    builder.skip(
      field(site.actionPath!),
      "no cluster named",
      "the route picks its cluster by weight or header; Envoy's default circuit breakers are assumed",
    );
  if (site.cluster?.value.outlier_detection !== undefined)
    builder.skip(
      clusterField([...site.cluster.path, "outlier_detection"]),
      site.cluster.value.outlier_detection,
      "ejects failing hosts; our model has one server",
    );
}

function read(text: string): ConfigReading {
  const parsed = parse(text);
  return { policies: parsed.sites.map((site) => readSite(parsed, site)) };
}

/** Edits to one retry_policy for a target, on its document. */
function writePolicy(document: Document, site: RouteSite, target: FlagSettings, current: FlagSettings, notes: string[]): boolean | string {
  const attempts = Number(effective(target, "max-attempts"));
  if (attempts === 0) return "Envoy needs a number of retries; it cannot say no limit (-max-attempts 0)";
  const values = policyValues(site.policy, () => "", site.policyPath ?? []);
  let changed = false;
  const set = (path: YamlPath, value: string | number) => {
    setYaml(document, [...(site.policyPath ?? [...site.actionPath!, "retry_policy"]), ...path], value);
    changed = true;
  };
  if (attempts === 1) {
    if (site.policyPath !== undefined && (values.numRetries ?? 1) !== 0 && !sameFlag("max-attempts", target, current))
      set(["num_retries"], 0);
    return changed;
  }
  if (site.policyPath === undefined || values.retryOn === undefined || values.retryOn.trim() === "") {
    set(["retry_on"], DEFAULT_RETRY_ON);
    notes.push(`retry_on "${DEFAULT_RETRY_ON}" is added, without which Envoy retries nothing; our model retries every failure`);
  }
  if ((values.numRetries ?? 1) !== attempts - 1) set(["num_retries"], attempts - 1);
  const baseMs = parseDuration(effective(target, "min-delay")!);
  const maxMs = parseDuration(effective(target, "max-delay")!);
  if (maxMs < baseMs)
    return `Envoy requires max_interval at least base_interval; the target's -max-delay ${ms(maxMs)} is below -min-delay ${ms(baseMs)}`;
  const baseChanged = baseMs !== Math.max(1, values.baseMs ?? ENVOY_BASE_INTERVAL_MS);
  const maxChanged =
    maxMs !==
    (values.maxMs ?? ENVOY_MAX_INTERVAL_TIMES_BASE * Math.max(1, baseChanged ? baseMs : (values.baseMs ?? ENVOY_BASE_INTERVAL_MS)));
  if (baseChanged || (maxChanged && values.baseMs === undefined))
    set(["retry_back_off", "base_interval"], protoDurationFor(ms(baseMs), "base_interval", notes));
  if (maxChanged) set(["retry_back_off", "max_interval"], protoDurationFor(ms(maxMs), "max_interval", notes));
  if (!sameFlag("timeout", target, current)) {
    set(["per_try_timeout"], protoDurationFor(effective(target, "timeout")!, "per_try_timeout", notes));
    const routeTimeout = site.action?.timeout;
    const routeMs = routeTimeout === undefined ? ROUTE_TIMEOUT_DEFAULT_MS : parseDuration(String(routeTimeout));
    if (routeMs > 0 && parseDuration(effective(target, "timeout")!) > routeMs)
      notes.push(`per_try_timeout above the route's timeout (${ms(routeMs)}) is cut to it: raise the route's timeout too`);
  }
  return changed;
}

/** Edits to the cluster's thresholds for a target's limit on retries in progress. */
function writeLimit(
  document: Document,
  site: RouteSite,
  limit: TargetLimit,
  field: (path: YamlPath) => string,
  notes: string[],
): string | undefined {
  if (site.cluster === undefined)
    return `the route's cluster${site.clusterName === undefined ? "" : ` "${site.clusterName}"`} is not in this file, where its circuit_breakers would be set`;
  const thresholds = thresholdsOf(site, field);
  const listPath = [...site.cluster.path, "circuit_breakers", "thresholds"];
  if (thresholds === undefined) appendYaml(document, listPath, { priority: site.action?.priority ?? "DEFAULT" });
  const index = thresholds?.index ?? (document.getIn(listPath, true) as { items: unknown[] }).items.length - 1;
  const at = [...listPath, index];
  const hasBudget = thresholds?.value.retry_budget !== undefined;
  if (limit.kind === "none") {
    if (hasBudget) deleteYaml(document, [...at, "retry_budget"]);
    setYaml(document, [...at, "max_retries"], UINT32_MAX);
    notes.push("Envoy always limits retries in progress; max_retries 4294967295 (as Istio sets it) never binds");
  } else if (limit.kind === "max-retries" && !hasBudget) {
    setYaml(document, [...at, "max_retries"], limit.maxRetries);
  } else {
    const percent = limit.kind === "budget" ? limit.percent : 0;
    const minConcurrency = limit.kind === "budget" ? limit.minConcurrency : limit.maxRetries;
    const budget = isObject(thresholds?.value.retry_budget) ? thresholds.value.retry_budget : {};
    const percentNow = isObject(budget.budget_percent) ? Number(budget.budget_percent.value ?? 0) : hasBudget ? 20 : undefined;
    if (percentNow !== percent) setYaml(document, [...at, "retry_budget", "budget_percent", "value"], percent);
    if (
      (budget.min_retry_concurrency === undefined ? (hasBudget ? 3 : undefined) : Number(budget.min_retry_concurrency)) !== minConcurrency
    )
      setYaml(document, [...at, "retry_budget", "min_retry_concurrency"], minConcurrency);
  }
  return undefined;
}

function write(text: string, policyIndex: number, target: FlagSettings): Written {
  const parsed = parse(text);
  const site = parsed.sites[policyIndex];
  if (site === undefined) throw new RangeError(`no policy ${policyIndex} in this Envoy file (it has ${parsed.sites.length})`);
  const why =
    unsayable(target, ENVOY_SAYABLE, "Envoy") ??
    (Number(effective(target, "max-attempts")) > 1 ? envoyBackoffProblem(target, "Envoy") : undefined);
  if (why !== undefined) return { kind: "inexpressible", why };
  const current = readSite(parsed, site).settings;
  const notes: string[] = [];
  const changed = new Set<number>();
  const policyDocument = parsed.documents[site.doc]!;
  const policyResult = writePolicy(policyDocument, site, target, current, notes);
  if (typeof policyResult === "string") return { kind: "inexpressible", why: policyResult };
  if (policyResult) changed.add(site.doc);
  const limit = targetLimit(target, "Envoy");
  if (typeof limit === "string") return { kind: "inexpressible", why: limit };
  const currentLimit = targetLimit(current, "Envoy") as TargetLimit;
  if (!sameLimit(limit, currentLimit)) {
    const clusterDocument = site.cluster === undefined ? policyDocument : parsed.documents[site.cluster.doc]!;
    const problem = writeLimit(clusterDocument, site, limit, namer(parsed.documents.length, site.cluster?.doc ?? 0), notes);
    if (problem !== undefined) return { kind: "inexpressible", why: problem };
    changed.add(site.cluster!.doc);
  }
  if (policyResult && site.action !== undefined && site.policyPath !== undefined && !site.policyPath.includes("routes")) {
    notes.push("the retry_policy changed is the virtual host's, which its other routes without their own share");
  }
  return { kind: "written", text: changed.size === 0 ? text : spliceDocuments(text, parsed.documents, changed), notes };
}

/** A key only Envoy's retry configuration has, in YAML or in JSON (which Envoy reads too). */
const RECOGNIZED = /^\s*-?\s*"?(virtual_hosts|retry_policy|num_retries|retry_back_off|static_resources|per_try_timeout)"?\s*:/m;

export const envoyFormat: ConfigFormat = {
  name: "envoy",
  title: "Envoy route retry_policy and cluster circuit_breakers (YAML)",
  source: `${ENVOY_RETRY_POLICY_SOURCE}; ${ENVOY_CIRCUIT_BREAKER_SOURCE}`,
  recognizes: (text) => RECOGNIZED.test(text) && !/networking\.istio\.io/.test(text),
  read,
  write: unlessShared(write),
  knobs: ["max-attempts", "min-delay", "max-delay", "timeout", "budget", "budget-percent", "budget-min-concurrency"],
};
