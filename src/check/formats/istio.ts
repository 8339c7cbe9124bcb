import type { Document } from "yaml";
import { parseDuration } from "../../cli/duration.ts";
import type { FlagSettings } from "../../recommend/settings.ts";
import { type ConfigFormat, ConfigFileError, type ConfigReading, type PolicyReading, type Written } from "../format.ts";
import {
  defaulted,
  effective,
  ENVOY_BASE_INTERVAL_MS,
  ENVOY_MAX_INTERVAL_TIMES_BASE,
  ENVOY_RETRY_POLICY_SOURCE,
  ENVOY_SAYABLE,
  envoyBackoffProblem,
  envoyBackoffReadings,
  goDurationAt,
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
  type RetryLimit,
  sameFlag,
  sameLimit,
  deleteYaml,
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
 * Istio's VirtualService and DestinationRule (YAML, several documents). Each http route of a
 * VirtualService is one policy: its retries (or Istio's default retry policy) become an Envoy
 * retry_policy (pilot's route/retry/retry.go), and the DestinationRule of its destination host
 * the cluster's circuit breakers: retryBudget (Istio 1.27, 2025) or connectionPool.http.maxRetries.
 * The numbers mean what they mean in Envoy, so envoy-shared.ts reads them.
 */

const HTTP_RETRY =
  'Istio "Virtual Service" reference, HTTPRetry, https://istio.io/latest/docs/reference/config/networking/virtual-service/#HTTPRetry';
const HTTP_ROUTE =
  'Istio "Virtual Service" reference, HTTPRoute, https://istio.io/latest/docs/reference/config/networking/virtual-service/#HTTPRoute';
const DEFAULT_RETRIES =
  'Istio "Traffic Management", Retries (by default a request is retried twice), https://istio.io/latest/docs/concepts/traffic-management/#retries';
const RETRY_BUDGET =
  'Istio "Destination Rule" reference, TrafficPolicy.RetryBudget, https://istio.io/latest/docs/reference/config/networking/destination-rule/#TrafficPolicy-RetryBudget';
const MAX_RETRIES =
  'Istio "Destination Rule" reference, ConnectionPoolSettings.HTTPSettings.maxRetries, https://istio.io/latest/docs/reference/config/networking/destination-rule/#ConnectionPoolSettings-HTTPSettings';

/** Istio's retries when a route sets none (MeshConfig's defaultHttpRetryPolicy may change them). */
const ISTIO_DEFAULT_ATTEMPTS = 2;

const RETRY_FIELDS: Readonly<Record<string, string>> = {
  retryOn: "which failures are retried; our model has one kind of failure, and retries every failure",
  retryRemoteLocalities: "whether a retry may go to another locality; our model has one server",
  retryIgnorePreviousHosts: "whether a retry avoids hosts already tried; our model has one server",
};

const ROUTE_FIELDS: Readonly<Record<string, string>> = {
  timeout: "a deadline over all attempts together; our model times each attempt out, with no deadline over them",
  fault: "injects delays and aborts; the scenario's faults stand for them",
  mirror: "copies of requests to another service; not modelled",
  mirrors: "copies of requests to other services; not modelled",
  mirrorPercentage: "copies of requests to another service; not modelled",
};

const HTTP_POOL_FIELDS: Readonly<Record<string, string>> = {
  http1MaxPendingRequests: "requests queued for a connection; our model does not queue in the proxy",
  http2MaxRequests: "requests in progress to the destination; our model does not limit them in the proxy",
  maxRequestsPerConnection: "connection reuse; not modelled",
  idleTimeout: "connection idle timeout; not modelled",
  h2UpgradePolicy: "HTTP/2 upgrade; not modelled",
  useClientProtocol: "upstream protocol; not modelled",
  maxConcurrentStreams: "HTTP/2 streams per connection; not modelled",
  http2KeepAlive: "HTTP/2 keepalive; not modelled",
};

interface Resource {
  readonly doc: number;
  readonly name: string;
  readonly namespace: string;
  readonly spec: JsonObject;
}

/** One http route and where its policy's parts are. */
interface RouteSite {
  readonly vs: Resource;
  readonly index: number;
  readonly route: JsonObject;
  readonly host: string | undefined;
  readonly rule: Resource | undefined;
  /** The path under the DestinationRule's spec of the trafficPolicy whose limit applies (the subset's, when it sets one). */
  readonly policyPath: YamlPath;
}

interface Parsed {
  readonly documents: ReturnType<typeof yamlDocuments>;
  readonly sites: readonly RouteSite[];
}

function resources(roots: readonly unknown[], kind: string): Resource[] {
  const found: Resource[] = [];
  roots.forEach((root, doc) => {
    if (!isObject(root) || root.kind !== kind || !String(root.apiVersion ?? "").startsWith("networking.istio.io/")) return;
    const metadata = isObject(root.metadata) ? root.metadata : {};
    const name = String(metadata.name ?? `document ${doc + 1}`);
    found.push({
      doc,
      name,
      namespace: String(metadata.namespace ?? "default"),
      spec: objectAt(root.spec, `${kind} "${name}": spec`, `a ${kind}'s spec`),
    });
  });
  return found;
}

/** A host as Istio resolves it: a short name within the resource's namespace, in the cluster's domain. */
function fullHost(host: string, namespace: string): string {
  if (host.startsWith("*") || host.endsWith(".svc.cluster.local")) return host;
  const parts = host.split(".");
  if (parts.length === 1) return `${host}.${namespace}.svc.cluster.local`;
  return parts.length === 2 ? `${host}.svc.cluster.local` : host;
}

/** The DestinationRule for a host: the exact one, else the longest wildcard that matches. */
function ruleFor(host: string, namespace: string, rules: readonly Resource[]): Resource | undefined {
  const wanted = fullHost(host, namespace);
  const hostOf = (rule: Resource) => fullHost(String(rule.spec.host ?? ""), rule.namespace);
  const exact = rules.find((rule) => hostOf(rule) === wanted);
  if (exact !== undefined) return exact;
  const wildcards = rules.filter((rule) => hostOf(rule).startsWith("*") && wanted.endsWith(hostOf(rule).slice(1)));
  return wildcards.sort((a, b) => hostOf(b).length - hostOf(a).length)[0];
}

/** The trafficPolicy whose limit on retries applies: the subset's when it sets a connection pool or a retry budget. */
function limitPolicyPath(rule: Resource | undefined, subset: unknown): YamlPath {
  if (rule === undefined || typeof subset !== "string") return ["trafficPolicy"];
  const subsets = Array.isArray(rule.spec.subsets) ? rule.spec.subsets : [];
  const index = subsets.findIndex((entry) => isObject(entry) && entry.name === subset);
  const policy = index < 0 ? undefined : (subsets[index] as JsonObject).trafficPolicy;
  return isObject(policy) && (policy.retryBudget !== undefined || policy.connectionPool !== undefined)
    ? ["subsets", index, "trafficPolicy"]
    : ["trafficPolicy"];
}

function parse(text: string): Parsed {
  const documents = yamlDocuments(text);
  const roots = documents.map((document) => document.toJS() as unknown);
  const services = resources(roots, "VirtualService");
  if (services.length === 0) throw new ConfigFileError("no VirtualService (apiVersion networking.istio.io/...) found in this file");
  const rules = resources(roots, "DestinationRule");
  const sites: RouteSite[] = [];
  for (const vs of services) {
    const http = listAt(vs.spec.http ?? [], `VirtualService "${vs.name}": spec.http`, "HTTP routes");
    http.forEach((entry, index) => {
      const route = objectAt(entry, `VirtualService "${vs.name}": spec.http[${index}]`, "an HTTP route");
      const destinations = Array.isArray(route.route) ? route.route : [];
      const destination = isObject(destinations[0]) && isObject(destinations[0].destination) ? destinations[0].destination : {};
      const host = typeof destination.host === "string" ? destination.host : undefined;
      const rule = host === undefined ? undefined : ruleFor(host, vs.namespace, rules);
      sites.push({ vs, index, route, host, rule, policyPath: limitPolicyPath(rule, destination.subset) });
    });
  }
  if (sites.length === 0) throw new ConfigFileError("no http route in any VirtualService: Istio's retries apply to spec.http[] routes");
  return { documents, sites };
}

const vsField = (site: RouteSite, rest: string) => `VirtualService "${site.vs.name}": spec.http[${site.index}]${rest}`;

/** The route's retries as the file says them, checked. */
interface RetryValues {
  readonly retries: JsonObject | undefined;
  readonly attempts: number;
  readonly backoffMs: number | undefined;
  readonly perTryMs: number | undefined;
  readonly routeTimeoutMs: number | undefined;
}

function retryValues(site: RouteSite): RetryValues {
  const retries = site.route.retries === undefined ? undefined : objectAt(site.route.retries, vsField(site, ".retries"), "HTTPRetry");
  const duration = (value: unknown, rest: string) => (value === undefined ? undefined : goDurationAt(value, vsField(site, rest), 1));
  return {
    retries,
    attempts:
      retries === undefined
        ? ISTIO_DEFAULT_ATTEMPTS
        : retries.attempts === undefined
          ? 0
          : integerAt(retries.attempts, vsField(site, ".retries.attempts"), 0, 2 ** 31 - 1),
    backoffMs: duration(retries?.backoff, ".retries.backoff"),
    perTryMs: duration(retries?.perTryTimeout, ".retries.perTryTimeout"),
    routeTimeoutMs: site.route.timeout === undefined ? undefined : goDurationAt(site.route.timeout, vsField(site, ".timeout"), 0),
  };
}

function readRetries(builder: PolicyBuilder, site: RouteSite, values: RetryValues): void {
  if (values.retries === undefined) {
    builder.read(
      vsField(site, ".retries"),
      defaulted(`attempts ${ISTIO_DEFAULT_ATTEMPTS}`),
      { "max-attempts": String(ISTIO_DEFAULT_ATTEMPTS + 1) },
      DEFAULT_RETRIES,
      "a mesh's defaultHttpRetryPolicy (MeshConfig) may set another default",
    );
  } else {
    const text = values.retries.attempts === undefined ? "absent (0: no retries)" : String(values.retries.attempts);
    builder.read(vsField(site, ".retries.attempts"), text, { "max-attempts": String(values.attempts + 1) }, HTTP_RETRY);
  }
  const base = {
    field: vsField(site, ".retries.backoff"),
    ms: values.backoffMs,
    source: HTTP_RETRY,
    ...(values.backoffMs === undefined ? {} : { text: String(values.retries!.backoff) }),
  };
  const max = { field: `${vsField(site, "")} (Envoy's retry_back_off.max_interval)`, ms: undefined, source: ENVOY_RETRY_POLICY_SOURCE };
  envoyBackoffReadings(builder, base, max, "; Istio has no field for it");
  if (values.perTryMs !== undefined) {
    builder.read(
      vsField(site, ".retries.perTryTimeout"),
      String(values.retries!.perTryTimeout),
      { timeout: ms(values.perTryMs) },
      HTTP_RETRY,
    );
  } else if (values.routeTimeoutMs !== undefined && values.routeTimeoutMs > 0) {
    builder.read(
      vsField(site, ".retries.perTryTimeout"),
      defaulted(`the route's timeout, ${ms(values.routeTimeoutMs)}`),
      { timeout: ms(values.routeTimeoutMs) },
      HTTP_RETRY,
      "the route's timeout is a deadline over all attempts; the first attempt that takes it all leaves none for retries",
    );
  } else {
    builder.read(
      vsField(site, ".retries.perTryTimeout"),
      defaulted("the route's timeout: none"),
      {},
      HTTP_ROUTE,
      "Istio then has no timeout on an attempt; our model has one: the scenario's -timeout applies",
    );
  }
  for (const [key, value] of Object.entries(values.retries ?? {})) {
    if (!["attempts", "backoff", "perTryTimeout"].includes(key))
      builder.skip(
        vsField(site, `.retries.${key}`),
        value,
        RETRY_FIELDS[key] ?? "not a field of Istio's HTTPRetry; Kubernetes refuses it (strict field validation)",
      );
  }
  for (const [key, value] of Object.entries(site.route)) {
    const why = ROUTE_FIELDS[key];
    if (why !== undefined) builder.skip(vsField(site, `.${key}`), value, why);
  }
  const destinations = Array.isArray(site.route.route) ? site.route.route : [];
  if (destinations.length > 1)
    builder.skip(
      vsField(site, ".route[1:]"),
      destinations.slice(1),
      "further weighted destinations; only the first one's DestinationRule is read",
    );
}

const ruleField = (rule: Resource, path: YamlPath) =>
  `DestinationRule "${rule.name}": spec${path.map((part) => (typeof part === "number" ? `[${part}]` : `.${part}`)).join("")}`;

/** The DestinationRule's limit on retries in progress for the route, read into our envoy budget. */
function readLimit(builder: PolicyBuilder, site: RouteSite): RetryLimit {
  const rule = site.rule;
  if (rule === undefined) {
    const limit: RetryLimit = { kind: "max-retries", maxRetries: UINT32_MAX };
    builder.read(
      `DestinationRule for ${site.host === undefined ? "the route" : `"${site.host}"`}: not in this file`,
      defaulted("no retryBudget, maxRetries 2^32 - 1"),
      {},
      MAX_RETRIES,
      limitApproximation(limit),
    );
    return limit;
  }
  const found = getPath(rule.spec, site.policyPath);
  const policy = found === undefined ? {} : objectAt(found, ruleField(rule, site.policyPath), "a TrafficPolicy");
  skipPolicyFields(builder, rule, site.policyPath, policy);
  if (policy.retryBudget !== undefined)
    return readBudget(
      builder,
      rule,
      [...site.policyPath, "retryBudget"],
      objectAt(policy.retryBudget, ruleField(rule, [...site.policyPath, "retryBudget"]), "RetryBudget"),
    );
  const pool = isObject(policy.connectionPool) && isObject(policy.connectionPool.http) ? policy.connectionPool.http : {};
  const at = [...site.policyPath, "connectionPool", "http", "maxRetries"];
  const maxRetries = pool.maxRetries === undefined ? 0 : integerAt(pool.maxRetries, ruleField(rule, at), 0, 2 ** 31 - 1);
  const limit: RetryLimit = { kind: "max-retries", maxRetries: maxRetries > 0 ? maxRetries : UINT32_MAX };
  builder.read(
    ruleField(rule, at),
    pool.maxRetries === undefined ? defaulted("2^32 - 1") : String(pool.maxRetries),
    limitSettings(limit),
    MAX_RETRIES,
    (maxRetries === 0 && pool.maxRetries !== undefined ? "Istio reads 0 as unset: " : "") + limitApproximation(limit),
  );
  return limit;
}

function getPath(object: JsonObject, path: YamlPath): unknown {
  return path.reduce<unknown>(
    (value, part) => (isObject(value) || Array.isArray(value) ? (value as Record<string | number, unknown>)[part] : undefined),
    object,
  );
}

function readBudget(builder: PolicyBuilder, rule: Resource, at: YamlPath, budget: JsonObject): RetryLimit {
  const percent = budget.percent === undefined ? 20 : numberAt(budget.percent, ruleField(rule, [...at, "percent"]), { min: 0, max: 100 });
  const minGiven =
    budget.minRetryConcurrency === undefined
      ? 0
      : integerAt(budget.minRetryConcurrency, ruleField(rule, [...at, "minRetryConcurrency"]), 0);
  const limit: RetryLimit = { kind: "budget", percent, minConcurrency: minGiven > 0 ? minGiven : 3 };
  const settings = limitSettings(limit);
  const percentNote = budget.percent === undefined ? "; Istio before the fix of istio/istio#59504 set this default to 0.2 %" : "";
  builder.read(
    ruleField(rule, [...at, "percent"]),
    budget.percent === undefined ? defaulted("20") : String(percent),
    { budget: "envoy", "budget-percent": settings["budget-percent"]! },
    RETRY_BUDGET,
    limitApproximation(limit) + percentNote,
  );
  builder.read(
    ruleField(rule, [...at, "minRetryConcurrency"]),
    budget.minRetryConcurrency === undefined ? defaulted("3") : String(budget.minRetryConcurrency),
    { "budget-min-concurrency": settings["budget-min-concurrency"]! },
    RETRY_BUDGET,
    minGiven === 0 && budget.minRetryConcurrency !== undefined ? "Istio reads 0 as unset: 3" : undefined,
  );
  for (const [key, value] of Object.entries(budget)) {
    if (key === "percent" || key === "minRetryConcurrency") continue;
    const interval = key === "budgetInterval" && typeof value === "string" && parseDuration(value) === 0;
    if (!interval)
      builder.skip(
        ruleField(rule, [...at, key]),
        value,
        key === "budgetInterval"
          ? "counts requests over an interval; our envoy budget counts those in progress"
          : "not a field of Istio's RetryBudget; Kubernetes refuses it (strict field validation)",
      );
  }
  return limit;
}

function skipPolicyFields(builder: PolicyBuilder, rule: Resource, at: YamlPath, policy: JsonObject): void {
  for (const [key, value] of Object.entries(policy)) {
    if (key === "retryBudget") continue;
    if (key !== "connectionPool") {
      builder.skip(
        ruleField(rule, [...at, key]),
        value,
        key === "outlierDetection" ? "ejects failing hosts; our model has one server" : "not about retries; not modelled",
      );
      continue;
    }
    const pool = isObject(value) ? value : {};
    for (const [poolKey, poolValue] of Object.entries(pool)) {
      if (poolKey !== "http")
        builder.skip(
          ruleField(rule, [...at, key, poolKey]),
          poolValue,
          "connection limits; our model's clients are not limited by connections",
        );
    }
    for (const [httpKey, httpValue] of Object.entries(isObject(pool.http) ? pool.http : {})) {
      if (httpKey !== "maxRetries")
        builder.skip(
          ruleField(rule, [...at, key, "http", httpKey]),
          httpValue,
          HTTP_POOL_FIELDS[httpKey] ?? "not a field of Istio's HTTPSettings; Kubernetes refuses it",
        );
    }
  }
}

function readSite(site: RouteSite): PolicyReading {
  const builder = new PolicyBuilder();
  readRetries(builder, site, retryValues(site));
  readLimit(builder, site);
  const routeName = typeof site.route.name === "string" ? ` "${site.route.name}"` : "";
  return builder.build(`VirtualService "${site.vs.name}" http[${site.index}]${routeName}`);
}

function read(text: string): ConfigReading {
  return { policies: parse(text).sites.map(readSite) };
}

/** The route's retries edited for the target; true when anything changed. */
function writeRetries(document: Document, site: RouteSite, target: FlagSettings, current: FlagSettings, notes: string[]): boolean {
  const values = retryValues(site);
  const base: YamlPath = ["spec", "http", site.index, "retries"];
  let changed = false;
  const attempts = Number(effective(target, "max-attempts"));
  const set = (key: string, value: string | number) => {
    // A retries block without attempts means no retries: one created here says them.
    if (values.retries === undefined && !changed && key !== "attempts") setYaml(document, [...base, "attempts"], attempts - 1);
    setYaml(document, [...base, key], value);
    changed = true;
  };
  if (attempts - 1 !== values.attempts) set("attempts", attempts - 1);
  if (attempts === 1) return changed;
  const backoffMs = parseDuration(effective(target, "min-delay")!);
  if (backoffMs !== Math.max(1, values.backoffMs ?? ENVOY_BASE_INTERVAL_MS)) set("backoff", ms(backoffMs));
  const maxMs = parseDuration(effective(target, "max-delay")!);
  if (maxMs !== ENVOY_MAX_INTERVAL_TIMES_BASE * backoffMs) {
    notes.push(
      `Istio has no field for Envoy's max_interval: it is ${ENVOY_MAX_INTERVAL_TIMES_BASE} x backoff, ${ms(ENVOY_MAX_INTERVAL_TIMES_BASE * backoffMs)}, not the target's ${ms(maxMs)}`,
    );
  }
  if (!sameFlag("timeout", target, current)) set("perTryTimeout", effective(target, "timeout")!);
  return changed;
}

/** The DestinationRule edited for the target's limit; a string says why it cannot be. */
function writeLimit(document: Document, site: RouteSite, limit: TargetLimit, notes: string[]): string | undefined {
  if (site.rule === undefined)
    return `no DestinationRule for ${site.host === undefined ? "the route's destination" : `"${site.host}"`} in this file, where the retry budget would be set`;
  const at: YamlPath = ["spec", ...site.policyPath];
  const policy = getPath(site.rule.spec, site.policyPath);
  const budget = isObject(policy) && isObject(policy.retryBudget) ? policy.retryBudget : undefined;
  const pool =
    isObject(policy) && isObject(policy.connectionPool) && isObject(policy.connectionPool.http) ? policy.connectionPool.http : {};
  if (limit.kind === "none") {
    if (budget !== undefined) deleteYaml(document, [...at, "retryBudget"]);
    if (pool.maxRetries !== undefined) deleteYaml(document, [...at, "connectionPool", "http", "maxRetries"]);
    return undefined;
  }
  const minConcurrency = limit.kind === "budget" ? limit.minConcurrency : limit.maxRetries;
  if (minConcurrency === 0)
    return "Istio reads a minimum of 0 retries in progress as its default (3 for a retry budget, no limit for maxRetries)";
  if (limit.kind === "max-retries" && budget === undefined) {
    setYaml(document, [...at, "connectionPool", "http", "maxRetries"], limit.maxRetries);
    return undefined;
  }
  const percent = limit.kind === "budget" ? limit.percent : 0;
  const currentPercent = budget === undefined ? undefined : Number(budget.percent ?? 20);
  const currentMin = budget === undefined ? undefined : Number(budget.minRetryConcurrency ?? 0) || 3;
  if (currentPercent !== percent) setYaml(document, [...at, "retryBudget", "percent"], percent);
  if (currentMin !== minConcurrency) setYaml(document, [...at, "retryBudget", "minRetryConcurrency"], minConcurrency);
  if (budget === undefined && pool.maxRetries !== undefined)
    notes.push("retryBudget overrides connectionPool.http.maxRetries, which stays as it was");
  return undefined;
}

function write(text: string, policyIndex: number, target: FlagSettings): Written {
  const parsed = parse(text);
  const site = parsed.sites[policyIndex];
  if (site === undefined) throw new RangeError(`no policy ${policyIndex} in this Istio file (it has ${parsed.sites.length})`);
  const attempts = Number(effective(target, "max-attempts"));
  if (attempts === 0) return { kind: "inexpressible", why: "Istio needs a number of retries; it cannot say no limit (-max-attempts 0)" };
  const why = unsayable(target, ENVOY_SAYABLE, "Istio") ?? (attempts > 1 ? envoyBackoffProblem(target, "Istio") : undefined);
  if (why !== undefined) return { kind: "inexpressible", why };
  const current = readSite(site).settings;
  const notes: string[] = [];
  const changed = new Set<number>();
  if (writeRetries(parsed.documents[site.vs.doc]!, site, target, current, notes)) changed.add(site.vs.doc);
  const limit = targetLimit(target, "Istio");
  if (typeof limit === "string") return { kind: "inexpressible", why: limit };
  if (!sameLimit(limit, targetLimit(current, "Istio") as TargetLimit)) {
    const problem = writeLimit(parsed.documents[site.rule?.doc ?? 0]!, site, limit, notes);
    if (problem !== undefined) return { kind: "inexpressible", why: problem };
    changed.add(site.rule!.doc);
  }
  return { kind: "written", text: changed.size === 0 ? text : spliceDocuments(text, parsed.documents, changed), notes };
}

export const istioFormat: ConfigFormat = {
  name: "istio",
  title: "Istio VirtualService retries and DestinationRule retry budget (YAML)",
  source: `${HTTP_RETRY}; ${RETRY_BUDGET}`,
  recognizes: (text) => /^\s*apiVersion:\s*["']?networking\.istio\.io\//m.test(text) && /^\s*kind:\s*["']?VirtualService/m.test(text),
  read,
  write: unlessShared(write),
  knobs: ["max-attempts", "min-delay", "timeout", "budget", "budget-percent", "budget-min-concurrency"],
};
