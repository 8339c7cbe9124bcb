import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { envoyFormat } from "../../../../src/check/formats/envoy.ts";
import { istioFormat } from "../../../../src/check/formats/istio.ts";
import { envoySchemaErrors, envoyType } from "../../../helpers/envoy-schema.ts";
import {
  changed,
  changedLines,
  configError,
  expectNoOpWrites,
  expectSimulatorTakes,
  fieldsOf,
  fixture,
  unmodeledOf,
  writeAndRead,
} from "../../../helpers/config-formats.ts";
import { policyWaits, winnerIntent } from "../../../helpers/snippets.ts";

const BOOTSTRAP = fixture("envoy", "bootstrap.yaml");
const ROUTE_AND_CLUSTER = fixture("envoy", "route-and-cluster.yaml");
const BARE = fixture("envoy", "retry-policy.yaml");
const ROUTE = "static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0]";

type Json = Record<string, unknown>;

/**
 * A written file against Envoy's own API (its .proto files, helpers/envoy-schema.ts): each route
 * configuration, cluster and bare retry policy in it, found where Envoy reads them.
 */
function expectEnvoyAccepts(text: string): void {
  const roots = parseAllDocuments(text as string) as unknown as { toJS(): Json }[];
  for (const root of roots.map((document) => document.toJS())) {
    const resources = root.static_resources as { listeners: Json[]; clusters: Json[] } | undefined;
    const routeConfigs =
      resources === undefined
        ? [root]
        : resources.listeners.map(
            (listener) => (((listener.filter_chains as Json[])[0]!.filters as Json[])[0]!.typed_config as Json).route_config as Json,
          );
    const clusters = resources?.clusters ?? [];
    for (const config of routeConfigs) {
      const type = "virtual_hosts" in config ? "RouteConfiguration" : "circuit_breakers" in config ? "" : "RetryPolicy";
      if (type !== "") expect(envoySchemaErrors(envoyType(`envoy.config.route.v3.${type}`), config), text).toEqual([]);
      else clusters.push(config);
    }
    for (const cluster of clusters) expect(envoySchemaErrors(envoyType("envoy.config.cluster.v3.Cluster"), cluster), text).toEqual([]);
  }
}

describe("Envoy: reading", () => {
  it("reads a bootstrap's routes field by field: num_retries, retry_back_off as full jitter, per_try_timeout, the cluster's retry_budget", () => {
    const [checkout, catalog] = envoyFormat.read(BOOTSTRAP).policies;
    expect(checkout!.name).toBe('route "checkout" of virtual host "orders"');
    expect(checkout!.settings).toEqual({
      strategy: "full-jitter",
      "max-attempts": "4",
      "min-delay": "50ms",
      "max-delay": "1s",
      timeout: "500ms",
      budget: "envoy",
      "budget-percent": "25",
      "budget-min-concurrency": "5",
    });
    const policy = `${ROUTE}.routes[0].route.retry_policy`;
    const thresholds = "static_resources.clusters[0].circuit_breakers.thresholds[0]";
    expect(fieldsOf(checkout!)).toEqual({
      [`${policy}.num_retries`]: ["3", { "max-attempts": "4" }],
      [`${policy}.retry_back_off.base_interval`]: ["0.05s", { strategy: "full-jitter", "min-delay": "50ms" }],
      [`${policy}.retry_back_off.max_interval`]: ["1s", { "max-delay": "1s" }],
      [`${policy}.per_try_timeout`]: ["0.5s", { timeout: "500ms" }],
      [`${thresholds}.retry_budget.budget_percent.value`]: ["25", { budget: "envoy", "budget-percent": "25" }],
      [`${thresholds}.retry_budget.min_retry_concurrency`]: ["5", { "budget-min-concurrency": "5" }],
    });
    expect(checkout!.fields.find((field) => field.field.endsWith("base_interval"))!.approximation).toMatch(
      /backoff_strategy\.cc.*\(2\^n - 1\) x base/,
    );
    for (const field of checkout!.fields) expect(field.source).toMatch(/^Envoy .*https:\/\/www\.envoyproxy\.io\/docs\//);
    // The catalog route has no retry_policy of its own: its virtual host's applies, with Envoy's defaults, and its cluster's max_retries.
    expect(catalog!.settings).toEqual({
      strategy: "full-jitter",
      "max-attempts": "3",
      "min-delay": "25ms",
      "max-delay": "250ms",
      timeout: "15s",
      budget: "envoy",
      "budget-percent": "0.0001",
      "budget-min-concurrency": "10",
    });
    expect(fieldsOf(catalog!)[`${ROUTE}.retry_policy.retry_back_off.base_interval`]![0]).toBe("default (25ms)");
    expect(fieldsOf(catalog!)[`${ROUTE}.retry_policy.retry_back_off.max_interval`]![0]).toBe("default (10 x base interval, 250ms)");
    expect(fieldsOf(catalog!)[`${ROUTE}.retry_policy.per_try_timeout`]![0]).toBe("default (the route's timeout, default 15s)");
    for (const reading of envoyFormat.read(BOOTSTRAP).policies) expectSimulatorTakes(reading.settings);
  });

  it("names every retry field it does not model, and the deadline and connection limits beside them", () => {
    const [checkout, catalog] = envoyFormat.read(BOOTSTRAP).policies;
    const policy = `${ROUTE}.routes[0].route.retry_policy`;
    expect(unmodeledOf(checkout!)).toEqual({
      [`${ROUTE}.routes[0].route.timeout`]: "10s",
      "static_resources.clusters[0].circuit_breakers.thresholds[0].max_connections": "1000",
      [`${policy}.retry_on`]: "5xx,reset,connect-failure",
      [`${policy}.retriable_status_codes`]: "[429]",
      [`${policy}.retry_host_predicate`]: '[{"name":"envoy.retry_host_predicates.previous_hosts"}]',
    });
    expect(unmodeledOf(catalog!)).toEqual({ [`${ROUTE}.retry_policy.retry_on`]: "5xx" });
  });

  it("reads a route configuration with its cluster as a second document, and a bare retry_policy, with Envoy's defaults", () => {
    const [route] = envoyFormat.read(ROUTE_AND_CLUSTER).policies;
    expect(route!.settings).toEqual({
      strategy: "full-jitter",
      "max-attempts": "5",
      "min-delay": "100ms",
      "max-delay": "1s",
      timeout: "2s",
      budget: "envoy",
      "budget-percent": "0.0001",
      "budget-min-concurrency": "3",
    });
    expect(fieldsOf(route!)["document 2: circuit_breakers.thresholds[0].max_retries"]).toEqual([
      "default (3)",
      { budget: "envoy", "budget-percent": "0.0001", "budget-min-concurrency": "3" },
    ]);
    expect(route!.fields.find((field) => field.field.endsWith("max_retries"))!.approximation).toMatch(
      /exact below a million requests in progress/,
    );
    const [bare] = envoyFormat.read(BARE).policies;
    expect(bare!.settings).toEqual({
      strategy: "full-jitter",
      "max-attempts": "3",
      "min-delay": "25ms",
      "max-delay": "250ms",
      timeout: "1.5s",
      budget: "envoy",
      "budget-percent": "0.0001",
      "budget-min-concurrency": "3",
    });
    expect(Object.keys(fieldsOf(bare!))).toContain("cluster (none named): not in this file, circuit_breakers.thresholds[].max_retries");
    const noRetryOn = envoyFormat.read("num_retries: 3\n").policies[0]!;
    expect(noRetryOn.settings["max-attempts"]).toBe("1");
    const routeTimeoutOff = envoyFormat.read(ROUTE_AND_CLUSTER.replace(/ *per_try_timeout: 2s\n/, "")).policies[0]!;
    expect(routeTimeoutOff.settings.timeout).toBeUndefined();
    for (const reading of [route!, bare!, noRetryOn, routeTimeoutOff]) expectSimulatorTakes(reading.settings);
  });

  it("refuses a bad file with one line naming the field", () => {
    const cases: [string, RegExp][] = [
      ["retry_on: 5xx\nnum_retries: [1\n", /^line \d+: not valid YAML: /],
      ["retry_on: 5xx\nnum_retries: -1\n", /^num_retries: must be a whole number from 0 to 4294967295, got -1$/],
      ["retry_on: 5xx\nnum_retries: three\n", /^num_retries: must be a whole number/],
      ["retry_on: 5xx\nper_try_timeout: 500ms\n", /^per_try_timeout: must be a positive protobuf JSON duration.*got 500ms$/],
      [
        "retry_on: 5xx\nretry_back_off: { base_interval: 0s }\n",
        /^retry_back_off\.base_interval: must be a positive protobuf JSON duration/,
      ],
      [
        "retry_on: 5xx\nretry_back_off: { base_interval: 1s, max_interval: 0.5s }\n",
        /^retry_back_off\.max_interval: must be at least base_interval \(1s\), got 500ms$/,
      ],
      ["retry_on: 5xx\nretry_back_off: { max_interval: 1s }\n", /^retry_back_off\.base_interval: missing; Envoy requires it/],
      ["virtual_hosts: {}\n", /^virtual_hosts: must be a list/],
      ["name: backend\nconnect_timeout: 1s\n", /^no Envoy route or retry_policy found/],
    ];
    for (const [text, message] of cases)
      expect(
        configError(() => envoyFormat.read(text)),
        text,
      ).toMatch(message);
    const budget = BOOTSTRAP.replace("value: 25.0", "value: 125.0");
    expect(configError(() => envoyFormat.read(budget))).toMatch(
      /retry_budget\.budget_percent\.value: must be a number at least 0 and at most 100, got 125$/,
    );
  });

  it("recognizes Envoy's files and not Istio's", () => {
    for (const text of [BOOTSTRAP, ROUTE_AND_CLUSTER, BARE]) expect(envoyFormat.recognizes(text)).toBe(true);
    expect(envoyFormat.recognizes('{\n  "num_retries": 2,\n  "retry_on": "5xx"\n}\n')).toBe(true);
    expect(envoyFormat.read('{ "num_retries": 2, "retry_on": "5xx" }').policies[0]!.settings["max-attempts"]).toBe("3");
    expect(envoyFormat.recognizes(fixture("istio", "reviews.yaml"))).toBe(false);
    expect(istioFormat.recognizes(BOOTSTRAP)).toBe(false);
  });

  it("maps Envoy's backoff onto our full-jitter: each wait U(0, min(base x 2^(n-1), max_interval)), as backoff_strategy.cc draws it", () => {
    const settings = envoyFormat.read(BOOTSTRAP).policies[0]!.settings;
    for (const u of [0, 0.5, 0.99]) {
      // JitteredExponentialBackOffStrategy: the interval starts at base, doubles up to max_interval; the wait is random % interval.
      const envoy = [50, 100, 200, 400, 800, 1000].map((interval) => Math.floor(u * interval));
      const ours = policyWaits(winnerIntent(settings), 6, u).map(Math.floor);
      expect(ours, `u=${u}`).toEqual(envoy);
    }
  });
});

describe("Envoy: writing", () => {
  it("gives back the same text, byte for byte, for each policy's own settings", () => {
    for (const text of [BOOTSTRAP, ROUTE_AND_CLUSTER, BARE]) expectNoOpWrites(envoyFormat, text);
  });

  it("changes each knob alone, in the route or the cluster, touching only its lines, in a file Envoy's API accepts", () => {
    const knobs: Record<string, [Record<string, string | undefined>, number]> = {
      "max-attempts": [{ "max-attempts": "2" }, 1],
      "min-delay": [{ "min-delay": "40ms" }, 1],
      "max-delay": [{ "max-delay": "2s" }, 1],
      timeout: [{ timeout: "300ms" }, 1],
      // Removing a retry_budget block: its four lines go, max_retries comes.
      budget: [{ budget: undefined, "budget-percent": undefined, "budget-min-concurrency": undefined }, 4],
      "budget-percent": [{ "budget-percent": "50" }, 1],
      "budget-min-concurrency": [{ "budget-min-concurrency": "2" }, 1],
    };
    expect(Object.keys(knobs).sort()).toEqual([...envoyFormat.knobs].sort());
    for (const text of [BOOTSTRAP, ROUTE_AND_CLUSTER]) {
      const policy = envoyFormat.read(text).policies[0]!;
      for (const [knob, [change, lines]] of Object.entries(knobs)) {
        const target = changed(policy.settings, change);
        const written = writeAndRead(envoyFormat, text, 0, target);
        expect(written.settings, knob).toEqual(target);
        expect(changedLines(text, written.text).removed.length, knob).toBeLessThanOrEqual(lines);
        expectEnvoyAccepts(written.text);
      }
    }
  });

  it("writes a fixed limit as max_retries, or as budget_percent 0 where a retry_budget is, and says when a virtual host's policy is shared", () => {
    const [checkout, catalog] = envoyFormat.read(BOOTSTRAP).policies;
    const fixedLimit = writeAndRead(
      envoyFormat,
      BOOTSTRAP,
      0,
      changed(checkout!.settings, { "budget-percent": "0.0001", "budget-min-concurrency": "6" }),
    );
    // The printer keeps the number's own spelling (25.0 in the file).
    expect(changedLines(BOOTSTRAP, fixedLimit.text).added.map((line) => line.trim())).toEqual(["value: 0.0", "min_retry_concurrency: 6"]);
    const shared = writeAndRead(
      envoyFormat,
      BOOTSTRAP,
      1,
      changed(catalog!.settings, { "max-attempts": "4", "budget-min-concurrency": "4" }),
    );
    expect(changedLines(BOOTSTRAP, shared.text).added.map((line) => line.trim())).toEqual(["num_retries: 3", "- max_retries: 4"]);
    expect(shared.notes.join(" ")).toMatch(/virtual host's, which its other routes without their own share/);
    const clusterOnly = envoyFormat.write(BOOTSTRAP, 1, changed(catalog!.settings, { "budget-min-concurrency": "4" }));
    expect(clusterOnly.kind === "written" && clusterOnly.notes).toEqual([]);
    expectEnvoyAccepts(shared.text);
  });

  it("adds a retry_policy, with a retry_on, to a route that has none", () => {
    const text = ROUTE_AND_CLUSTER.replace(/ {10}retry_policy:\n( {12}.*\n| {14}.*\n)*/, "");
    const route = envoyFormat.read(text).policies[0]!;
    expect(route.settings["max-attempts"]).toBe("1");
    const written = writeAndRead(envoyFormat, text, 0, changed(route.settings, { "max-attempts": "3" }));
    expect(written.settings["max-attempts"]).toBe("3");
    expect(written.notes.join(" ")).toMatch(/retry_on "5xx,reset,connect-failure" is added/);
    expectEnvoyAccepts(written.text);
  });

  it("says what Envoy cannot express, and why", () => {
    const [checkout] = envoyFormat.read(BOOTSTRAP).policies;
    const why = (text: string, target: Record<string, string>) => {
      const written = envoyFormat.write(text, 0, target);
      return written.kind === "inexpressible" ? written.why : "written";
    };
    expect(why(BOOTSTRAP, { ...checkout!.settings, strategy: "decorrelated-jitter" })).toMatch(
      /always fully jittered.*cannot say -strategy decorrelated-jitter/,
    );
    expect(
      why(BOOTSTRAP, changed(checkout!.settings, { budget: "grpc", "budget-percent": undefined, "budget-min-concurrency": undefined })),
    ).toMatch(/cannot say -budget grpc/);
    expect(why(BOOTSTRAP, { ...checkout!.settings, breaker: "sampling" })).toMatch(/no field for -breaker sampling/);
    expect(why(BOOTSTRAP, { ...checkout!.settings, "max-attempts": "0" })).toMatch(/needs a number of retries/);
    expect(why(BOOTSTRAP, { ...checkout!.settings, "max-delay": "10ms" })).toMatch(/max_interval at least base_interval/);
    const bare = envoyFormat.read(BARE).policies[0]!;
    expect(why(BARE, { ...bare.settings, "budget-min-concurrency": "9" })).toMatch(/cluster is not in this file/);
  });
});

// Envoy documentation, "HTTP connection management: Retry plugin configuration",
// https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/http/http_connection_management#retry-plugin-configuration
// (the example that combines the previous_hosts predicate with previous_priorities), copied as published.
describe("the example from Envoy's documentation", () => {
  const example = fixture("envoy", "docs-retry-plugins.yaml");

  it("reads its retry_policy field by field: no retry_on, so no retry, whatever num_retries' default; the plugins named", () => {
    const [only, ...others] = envoyFormat.read(example).policies;
    expect(others).toEqual([]);
    expect(only!.name).toBe("retry_policy");
    const maxRetries = { budget: "envoy", "budget-percent": "0.0001", "budget-min-concurrency": "3" };
    expect(only!.settings).toEqual({
      "max-attempts": "1",
      strategy: "full-jitter",
      "min-delay": "25ms",
      "max-delay": "250ms",
      timeout: "15s",
      ...maxRetries,
    });
    expect(fieldsOf(only!)).toEqual({
      "retry_policy.num_retries": ["default (1)", { "max-attempts": "2" }],
      "retry_policy.retry_on": ["absent", { "max-attempts": "1" }],
      "retry_policy.retry_back_off.base_interval": ["default (25ms)", { strategy: "full-jitter", "min-delay": "25ms" }],
      "retry_policy.retry_back_off.max_interval": ["default (10 x base interval, 250ms)", { "max-delay": "250ms" }],
      "retry_policy.per_try_timeout": ["default (the route's timeout, not in this file, default 15s)", { timeout: "15s" }],
      "cluster (none named): not in this file, circuit_breakers.thresholds[].max_retries": ["default (3)", maxRetries],
    });
    expect(unmodeledOf(only!)).toEqual({
      "retry_policy.retry_host_predicate": '[{"name":"envoy.retry_host_predicates.previous_hosts"}]',
      "retry_policy.host_selection_retry_max_attempts": "3",
      "retry_policy.retry_priority": '{"name":"envoy.retry_priorities.previous_priorities","typed_config":{"@type":...',
    });
    expectSimulatorTakes(only!.settings);
  });
});
