import { describe, expect, it } from "vitest";
import { istioFormat } from "../../../../src/check/formats/istio.ts";
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

const REVIEWS = fixture("istio", "reviews.yaml");
const RATINGS = fixture("istio", "ratings.yaml");

/** A VirtualService for host `ratings` with one http route, its retries as given, and what follows it (a DestinationRule). */
const ratings = (retries: string, rest = "") =>
  [
    "apiVersion: networking.istio.io/v1",
    "kind: VirtualService",
    "metadata: { name: ratings, namespace: prod }",
    "spec:",
    "  http:",
    "    - route: [{ destination: { host: ratings, subset: v1 } }]",
    ...(retries === "" ? [] : [`      retries: ${retries}`]),
    rest,
  ].join("\n");
const rule = (trafficPolicy: string, subsets = "") =>
  `---\napiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: { name: ratings, namespace: prod }\nspec:\n  host: ratings\n  trafficPolicy: ${trafficPolicy}\n${subsets}`;

describe("Istio: reading", () => {
  it("reads each http route of a VirtualService field by field, through Envoy's semantics, with its DestinationRule's retry budget", () => {
    const [canary, fallback] = istioFormat.read(REVIEWS).policies;
    const budget = { budget: "envoy", "budget-percent": "25", "budget-min-concurrency": "5" };
    expect(canary!.name).toBe('VirtualService "reviews" http[0] "canary"');
    expect(canary!.settings).toEqual({
      strategy: "full-jitter",
      "max-attempts": "4",
      "min-delay": "50ms",
      "max-delay": "500ms",
      timeout: "2s",
      ...budget,
    });
    expect(fieldsOf(canary!)).toEqual({
      'VirtualService "reviews": spec.http[0].retries.attempts': ["3", { "max-attempts": "4" }],
      'VirtualService "reviews": spec.http[0].retries.backoff': ["50ms", { strategy: "full-jitter", "min-delay": "50ms" }],
      'VirtualService "reviews": spec.http[0] (Envoy\'s retry_back_off.max_interval)': [
        "default (10 x base interval, 500ms; Istio has no field for it)",
        { "max-delay": "500ms" },
      ],
      'VirtualService "reviews": spec.http[0].retries.perTryTimeout': ["2s", { timeout: "2s" }],
      'DestinationRule "reviews": spec.trafficPolicy.retryBudget.percent': ["25", { budget: "envoy", "budget-percent": "25" }],
      'DestinationRule "reviews": spec.trafficPolicy.retryBudget.minRetryConcurrency': ["5", { "budget-min-concurrency": "5" }],
    });
    expect(canary!.fields[0]!.source).toMatch(/^Istio "Virtual Service" reference, HTTPRetry, https:\/\/istio\.io\//);
    expect(canary!.fields.at(-1)!.source).toMatch(/^Istio "Destination Rule" reference, TrafficPolicy\.RetryBudget/);
    // No retries on the second route: Istio's default retry policy, 2 retries, no per-try timeout.
    expect(fallback!.settings).toEqual({
      strategy: "full-jitter",
      "max-attempts": "3",
      "min-delay": "25ms",
      "max-delay": "250ms",
      ...budget,
    });
    expect(fieldsOf(fallback!)['VirtualService "reviews": spec.http[1].retries']).toEqual([
      "default (attempts 2)",
      { "max-attempts": "3" },
    ]);
    expect(fieldsOf(fallback!)['VirtualService "reviews": spec.http[1].retries.perTryTimeout']).toEqual([
      "default (the route's timeout: none)",
      {},
    ]);
    const [limited] = istioFormat.read(RATINGS).policies;
    expect(limited!.settings).toEqual({
      strategy: "full-jitter",
      "max-attempts": "5",
      "min-delay": "25ms",
      "max-delay": "250ms",
      timeout: "500ms",
      budget: "envoy",
      "budget-percent": "0.0001",
      "budget-min-concurrency": "8",
    });
    for (const policy of [canary!, fallback!, limited!]) expectSimulatorTakes(policy.settings);
  });

  it("names what it does not model: retryOn, the route's deadline, other destinations, outlier detection, connection limits", () => {
    const [canary, fallback] = istioFormat.read(REVIEWS).policies;
    const limits = {
      'DestinationRule "reviews": spec.trafficPolicy.connectionPool.tcp': '{"maxConnections":100}',
      'DestinationRule "reviews": spec.trafficPolicy.connectionPool.http.http2MaxRequests': "1000",
      'DestinationRule "reviews": spec.trafficPolicy.outlierDetection':
        '{"consecutive5xxErrors":7,"interval":"5m","baseEjectionTime":"15m"}',
    };
    expect(unmodeledOf(canary!)).toEqual({
      'VirtualService "reviews": spec.http[0].retries.retryOn': "5xx,connect-failure,refused-stream",
      'VirtualService "reviews": spec.http[0].timeout': "10s",
      ...limits,
    });
    expect(unmodeledOf(fallback!)).toEqual({
      'VirtualService "reviews": spec.http[1].route[1:]': '[{"destination":{"host":"reviews","subset":"v2"},"weight":10}]',
      ...limits,
    });
  });

  it("applies Istio's defaults: no attempts is no retries, the route's timeout per try, a budget of 20 % and 3, 0 read as unset, a subset's own policy, no rule no limit", () => {
    const read = (text: string) => istioFormat.read(text).policies[0]!.settings;
    expect(read(ratings("{ perTryTimeout: 1s }"))["max-attempts"]).toBe("1");
    expect(read(ratings("{ attempts: 2 }", "      timeout: 3s")).timeout).toBe("3s");
    expect(read(ratings("{ attempts: 2 }", rule("{ retryBudget: {} }")))).toMatchObject({
      "budget-percent": "20",
      "budget-min-concurrency": "3",
    });
    expect(read(ratings("{ attempts: 2 }", rule("{ retryBudget: { minRetryConcurrency: 0 } }")))["budget-min-concurrency"]).toBe("3");
    expect(read(ratings("{ attempts: 2 }", rule("{ connectionPool: { http: { maxRetries: 0 } } }"))).budget).toBeUndefined();
    const subset = "  subsets:\n    - name: v1\n      trafficPolicy: { retryBudget: { percent: 10 } }\n";
    expect(read(ratings("{ attempts: 2 }", rule("{ retryBudget: { percent: 40 } }", subset)))["budget-percent"]).toBe("10");
    const none = istioFormat.read(ratings("{ attempts: 2 }")).policies[0]!;
    expect(none.settings.budget).toBeUndefined();
    expect(Object.keys(fieldsOf(none))).toContain('DestinationRule for "ratings": not in this file');
  });

  it("refuses a bad file with one line naming the field", () => {
    const cases: [string, RegExp][] = [
      [
        ratings("{ attempts: -1 }"),
        /^VirtualService "ratings": spec\.http\[0\]\.retries\.attempts: must be a whole number from 0 to 2147483647, got -1$/,
      ],
      [
        ratings('{ attempts: 2, perTryTimeout: "2 s" }'),
        /retries\.perTryTimeout: must be a duration of at least 1ms such as "25ms" or "1\.5s", got 2 s$/,
      ],
      [ratings("{ attempts: 2, backoff: 0ms }"), /retries\.backoff: must be a duration of at least 1ms/],
      [
        ratings("{ attempts: 2 }", rule("{ retryBudget: { percent: 120 } }")),
        /^DestinationRule "ratings": spec\.trafficPolicy\.retryBudget\.percent: must be a number at least 0 and at most 100, got 120$/,
      ],
      [ratings("[attempts: 2"), /^line \d+: not valid YAML/],
      ["apiVersion: apps/v1\nkind: Deployment\n", /^no VirtualService/],
    ];
    for (const [text, message] of cases)
      expect(
        configError(() => istioFormat.read(text)),
        text,
      ).toMatch(message);
  });

  it("recognizes a file with a VirtualService and nothing else", () => {
    expect(istioFormat.recognizes(REVIEWS)).toBe(true);
    expect(istioFormat.recognizes(RATINGS)).toBe(true);
    expect(istioFormat.recognizes(fixture("envoy", "bootstrap.yaml"))).toBe(false);
  });
});

describe("Istio: writing", () => {
  it("gives back the same text, byte for byte, for each policy's own settings", () => {
    expectNoOpWrites(istioFormat, REVIEWS);
    expectNoOpWrites(istioFormat, RATINGS);
  });

  it("changes each knob alone, in the VirtualService or the DestinationRule, touching only its lines", () => {
    const knobs: Record<string, [Record<string, string | undefined>, number]> = {
      "max-attempts": [{ "max-attempts": "2" }, 1],
      "min-delay": [{ "min-delay": "40ms", "max-delay": "400ms" }, 1],
      timeout: [{ timeout: "300ms" }, 1],
      // The retryBudget block goes, with the comment above it.
      budget: [{ budget: undefined, "budget-percent": undefined, "budget-min-concurrency": undefined }, 4],
      "budget-percent": [{ "budget-percent": "50" }, 1],
      "budget-min-concurrency": [{ "budget-min-concurrency": "2" }, 1],
    };
    expect(Object.keys(knobs).sort()).toEqual([...istioFormat.knobs].sort());
    for (const [text, index] of [
      [REVIEWS, 0],
      [REVIEWS, 1],
      [RATINGS, 0],
    ] as const) {
      const policy = istioFormat.read(text).policies[index]!;
      for (const [knob, [change, lines]] of Object.entries(knobs)) {
        const target = changed(policy.settings, change);
        const written = writeAndRead(istioFormat, text, index, target);
        expect(written.settings, `${policy.name}: ${knob}`).toEqual(target);
        expect(changedLines(text, written.text).removed.length, knob).toBeLessThanOrEqual(lines);
      }
    }
  });

  it("does not change retries two routes share through a YAML anchor: inexpressible, said, and the file kept", () => {
    const shared = ratings(
      "&r { attempts: 3, perTryTimeout: 2s }",
      "    - route: [{ destination: { host: ratings } }]\n      retries: *r\n",
    );
    const policies = istioFormat.read(shared).policies;
    expect(policies.map((policy) => policy.settings["max-attempts"])).toEqual(["4", "4"]);
    const written = istioFormat.write(shared, 0, { ...policies[0]!.settings, "max-attempts": "2" });
    expect(written).toEqual({
      kind: "inexpressible",
      why: "spec.http.0.retries is shared through the YAML anchor &r: check does not change what several places share",
    });
  });

  it("does not delete a limit two subsets share through a YAML anchor either (a delete through the alias crashed the run)", () => {
    const shared = fixture("istio", "shared-traffic-policy.yaml");
    const policies = istioFormat.read(shared).policies;
    const { budget: _budget, "budget-percent": _percent, "budget-min-concurrency": _minimum, ...unlimited } = policies[0]!.settings;
    expect(istioFormat.write(shared, 0, unlimited)).toEqual({
      kind: "inexpressible",
      why: "spec.subsets.0.trafficPolicy is shared through the YAML anchor &tp: check does not change what several places share",
    });
    expect(istioFormat.write(shared, 1, unlimited)).toMatchObject({ kind: "inexpressible" });
  });

  it("says the retries in full where it adds them, and the nearest for a max-delay Istio cannot set", () => {
    const fallback = istioFormat.read(REVIEWS).policies[1]!;
    const written = writeAndRead(istioFormat, REVIEWS, 1, changed(fallback.settings, { "min-delay": "100ms" }));
    // A retries block without attempts would mean no retries: the new block says Istio's default of 2.
    expect(changedLines(REVIEWS, written.text).added.map((line) => line.trim())).toEqual(["attempts: 2", "backoff: 100ms"]);
    expect(written.text.split("retries:")).toHaveLength(REVIEWS.split("retries:").length + 1);
    expect(written.settings).toEqual(changed(fallback.settings, { "min-delay": "100ms", "max-delay": "1s" }));
    expect(written.notes).toEqual(["Istio has no field for Envoy's max_interval: it is 10 x backoff, 1s, not the target's 250ms"]);
    const limited = istioFormat.read(RATINGS).policies[0]!;
    const budgeted = writeAndRead(
      istioFormat,
      RATINGS,
      0,
      changed(limited.settings, { "budget-percent": "30", "budget-min-concurrency": "4" }),
    );
    expect(budgeted.settings).toMatchObject({ budget: "envoy", "budget-percent": "30", "budget-min-concurrency": "4" });
    expect(budgeted.notes.join(" ")).toMatch(/retryBudget overrides connectionPool\.http\.maxRetries/);
  });

  it("says what Istio cannot express, and why", () => {
    const [canary] = istioFormat.read(REVIEWS).policies;
    const why = (text: string, target: Record<string, string>) => {
      const written = istioFormat.write(text, 0, target);
      return written.kind === "inexpressible" ? written.why : "written";
    };
    expect(why(REVIEWS, { ...canary!.settings, strategy: "equal-jitter" })).toMatch(/cannot say -strategy equal-jitter/);
    expect(
      why(REVIEWS, changed(canary!.settings, { budget: "aws", "budget-percent": undefined, "budget-min-concurrency": undefined })),
    ).toMatch(/cannot say -budget aws/);
    expect(why(REVIEWS, { ...canary!.settings, "max-attempts": "0" })).toMatch(/needs a number of retries/);
    expect(why(REVIEWS, { ...canary!.settings, "budget-min-concurrency": "0" })).toMatch(/reads a minimum of 0/);
    expect(why(REVIEWS, { ...canary!.settings, throttle: "sre" })).toMatch(/no field for -throttle sre/);
    const alone = ratings("{ attempts: 2 }");
    expect(why(alone, { ...istioFormat.read(alone).policies[0]!.settings, budget: "envoy" })).toMatch(
      /no DestinationRule for "ratings" in this file/,
    );
  });
});

// Istio documentation, "Virtual Service" reference, HTTPRetry,
// https://istio.io/latest/docs/reference/config/networking/virtual-service/#HTTPRetry (from istio/api's
// networking/v1alpha3/virtual_service.proto), copied as published.
describe("the example from Istio's documentation", () => {
  const example = fixture("istio", "docs-ratings-route.yaml");

  it("reads ratings-route's retries field by field, with Envoy's backoff and no DestinationRule's limit", () => {
    const [only, ...others] = istioFormat.read(example).policies;
    expect(others).toEqual([]);
    const route = 'VirtualService "ratings-route": spec.http[0]';
    expect(only!.name).toBe('VirtualService "ratings-route" http[0]');
    expect(only!.settings).toEqual({
      "max-attempts": "4",
      strategy: "full-jitter",
      "min-delay": "25ms",
      "max-delay": "250ms",
      timeout: "2s",
    });
    expect(fieldsOf(only!)).toEqual({
      [`${route}.retries.attempts`]: ["3", { "max-attempts": "4" }],
      [`${route}.retries.backoff`]: ["default (25ms)", { strategy: "full-jitter", "min-delay": "25ms" }],
      [`${route} (Envoy's retry_back_off.max_interval)`]: [
        "default (10 x base interval, 250ms; Istio has no field for it)",
        { "max-delay": "250ms" },
      ],
      [`${route}.retries.perTryTimeout`]: ["2s", { timeout: "2s" }],
      'DestinationRule for "ratings.prod.svc.cluster.local": not in this file': ["default (no retryBudget, maxRetries 2^32 - 1)", {}],
    });
    expect(unmodeledOf(only!)).toEqual({ [`${route}.retries.retryOn`]: "gateway-error,connect-failure,refused-stream" });
    expectSimulatorTakes(only!.settings);
  });
});
