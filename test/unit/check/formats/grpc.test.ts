import * as grpc from "@grpc/grpc-js";
import { validateServiceConfig } from "@grpc/grpc-js/build/src/service-config.js";
import { parse } from "jsonc-parser";
import { afterEach, describe, expect, it, vi } from "vitest";
import { grpcFormat } from "../../../../src/check/formats/grpc.ts";
import { envoyFormat } from "../../../../src/check/formats/envoy.ts";
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
import { startUnaryServer, unaryDefinition, unavailable } from "../../../helpers/grpc-server.ts";

const THROTTLED = fixture("grpc", "retry-throttled.json");
const GO_EXAMPLE = fixture("grpc", "grpc-go-example.json");
const A6 = /gRPC A6 "gRPC Retry Design", https:\/\/github\.com\/grpc\/proposal/;

/** grpc-js's own validation of a service config, the one its channel applies: it throws on what gRPC refuses. */
const grpcJsAccepts = (text: string) => expect(() => validateServiceConfig(parse(text))).not.toThrow();

describe("gRPC service config: reading", () => {
  it("reads each methodConfig field by field: a retryPolicy as our grpc strategy, a hedgingPolicy as -hedge-delay, retryThrottling as -budget grpc", () => {
    const [retry, hedge, none] = grpcFormat.read(THROTTLED).policies;
    const budget = { budget: "grpc", "budget-tokens": "10", "budget-ratio": "0.1" };
    expect(retry!.name).toBe("methodConfig[0] (shop.Orders/GetOrder, shop.Orders/ListOrders)");
    expect(retry!.settings).toEqual({
      strategy: "grpc",
      "max-attempts": "4",
      "min-delay": "100ms",
      "max-delay": "1s",
      "backoff-factor": "2",
      jitter: "0.2",
      ...budget,
    });
    expect(fieldsOf(retry!)).toEqual({
      "methodConfig[0].retryPolicy.maxAttempts": ["4", { "max-attempts": "4" }],
      "methodConfig[0].retryPolicy.initialBackoff": ["0.1s", { strategy: "grpc", "min-delay": "100ms", jitter: "0.2" }],
      "methodConfig[0].retryPolicy.maxBackoff": ["1s", { "max-delay": "1s" }],
      "methodConfig[0].retryPolicy.backoffMultiplier": ["2", { "backoff-factor": "2" }],
      "retryThrottling.maxTokens": ["10", { budget: "grpc", "budget-tokens": "10" }],
      "retryThrottling.tokenRatio": ["0.1", { "budget-ratio": "0.1" }],
    });
    for (const field of retry!.fields) expect(field.source).toMatch(A6);
    expect(retry!.fields.find((field) => field.field.endsWith("initialBackoff"))!.approximation).toMatch(/U\(0, that backoff\)/);
    expect(hedge!.settings).toEqual({ strategy: "fixed", "max-attempts": "3", "hedge-delay": "50ms", ...budget });
    expect(hedge!.fields.find((field) => field.field === "retryThrottling.maxTokens")!.approximation).toMatch(
      /grpc-js \(1\.14\) sends hedged copies whatever its tokens/,
    );
    expect(none!.settings).toEqual({ strategy: "fixed", "max-attempts": "1", ...budget });
    for (const policy of [retry!, hedge!, none!]) expectSimulatorTakes(policy.settings);
  });

  it("names every field it does not model: status codes, the deadline over all attempts, waitForReady, load balancing", () => {
    const [retry, hedge, none] = grpcFormat.read(THROTTLED).policies;
    expect(unmodeledOf(retry!)).toEqual({
      "methodConfig[0].retryPolicy.retryableStatusCodes": '["UNAVAILABLE","RESOURCE_EXHAUSTED"]',
      "methodConfig[0].waitForReady": "true",
      "methodConfig[0].timeout": "2.5s",
    });
    expect(unmodeledOf(hedge!)).toEqual({ "methodConfig[1].hedgingPolicy.nonFatalStatusCodes": '["UNAVAILABLE"]' });
    expect(unmodeledOf(none!)).toEqual({ "methodConfig[2].timeout": "5s" });
    const [echo] = grpcFormat.read(GO_EXAMPLE).policies;
    expect(unmodeledOf(echo!)).toEqual({
      "methodConfig[0].retryPolicy.retryableStatusCodes": '["UNAVAILABLE"]',
      loadBalancingConfig: '[{"round_robin":{}}]',
    });
    expect(echo!.unmodeled.every((field) => field.why.length > 20 && !field.why.includes("\n"))).toBe(true);
  });

  it("applies A6's rules and defaults: maxAttempts above 5 is 5, hedgingDelay 0s, no retryThrottling no budget, a multiplier below 1 is 1", () => {
    const [echo] = grpcFormat.read(GO_EXAMPLE).policies;
    expect(echo!.settings).toEqual({
      strategy: "grpc",
      "max-attempts": "5",
      "min-delay": "10ms",
      "max-delay": "300ms",
      "backoff-factor": "1.6",
      jitter: "0.2",
    });
    expect(echo!.fields.find((field) => field.field.endsWith("maxAttempts"))!.approximation).toMatch(/above 5 as 5/);
    expect(fieldsOf(echo!).retryThrottling).toEqual(["absent", {}]);
    const config = (policy: string) => `{ "methodConfig": [{ "name": [{}], ${policy} }] }`;
    const [hedged] = grpcFormat.read(config('"hedgingPolicy": { "maxAttempts": 2 }')).policies;
    expect(hedged!.name).toBe("methodConfig[0] (every method)");
    expect(fieldsOf(hedged!)["methodConfig[0].hedgingPolicy.hedgingDelay"]).toEqual([
      "default (0s: every copy at once)",
      { strategy: "fixed", "hedge-delay": "0s" },
    ]);
    expect(hedged!.fields.find((field) => field.field.endsWith("nonFatalStatusCodes"))!.approximation).toMatch(/first failed copy/);
    const shrinking = config(
      '"retryPolicy": { "maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "2s", "backoffMultiplier": 0.5, "retryableStatusCodes": [14] }',
    );
    expect(grpcFormat.read(shrinking).policies[0]!.settings["backoff-factor"]).toBe("1");
  });

  it("refuses a bad file with one line naming the field, what is wrong and what is allowed", () => {
    const retry = (fields: string) => `{ "methodConfig": [{ "name": [{ "service": "s" }], "retryPolicy": { ${fields} } }] }`;
    const good = '"initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]';
    const cases: [string, RegExp][] = [
      ["{ methodConfig: [", /^line 1: not valid JSON: /],
      [retry(`"maxAttempts": 1, ${good}`), /^methodConfig\[0\]\.retryPolicy\.maxAttempts: must be a whole number from 2 to .*, got 1$/],
      [retry(`"maxAttempts": "3", ${good}`), /maxAttempts: must be a whole number .* got 3$/],
      // Past the double's range a number reads as Infinity, which JSON prints as null: said as what it is.
      [retry(`"maxAttempts": 1e400, ${good}`), /maxAttempts: must be a whole number .* got infinity \(or a number beyond 1\.8e308\)$/],
      [
        retry(`"maxAttempts": 3, ${good.replace('"0.1s"', '"100ms"')}`),
        /retryPolicy\.initialBackoff: must be a positive protobuf JSON duration.* got 100ms$/,
      ],
      [retry(`"maxAttempts": 3, ${good.replace('"1s"', '"-1s"')}`), /retryPolicy\.maxBackoff: must be a positive protobuf JSON duration/],
      [retry(`"maxAttempts": 3, ${good.replace("2,", "0,")}`), /backoffMultiplier: must be a number above 0, got 0$/],
      [
        retry('"maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2'),
        /retryableStatusCodes: missing; A6 requires it/,
      ],
      [`{ "methodConfig": [{ "retryPolicy": {}, "hedgingPolicy": {} }] }`, /^methodConfig\[0\]: has both retryPolicy and hedgingPolicy/],
      [
        `{ "methodConfig": [{ "name": [] }], "retryThrottling": { "maxTokens": 2000, "tokenRatio": 0.1 } }`,
        /^retryThrottling\.maxTokens: must be a number above 0 and at most 1000, got 2000$/,
      ],
      ['{ "methodConfig": {} }', /^methodConfig: must be a list/],
      ['{ "loadBalancingPolicy": "round_robin" }', /^methodConfig: no method config/],
    ];
    for (const [text, message] of cases)
      expect(
        configError(() => grpcFormat.read(text)),
        text,
      ).toMatch(message);
  });

  it("recognizes a service config and nothing else", () => {
    expect(grpcFormat.recognizes(THROTTLED)).toBe(true);
    expect(grpcFormat.recognizes(GO_EXAMPLE)).toBe(true);
    expect(grpcFormat.recognizes(fixture("envoy", "bootstrap.yaml"))).toBe(false);
    expect(grpcFormat.recognizes('{ "other": { "methodConfig": [] } }')).toBe(false);
    expect(envoyFormat.recognizes(THROTTLED)).toBe(false);
  });
});

describe("gRPC service config: writing", () => {
  it("gives back the same text, byte for byte, for each policy's own settings", () => {
    expectNoOpWrites(grpcFormat, THROTTLED);
    expectNoOpWrites(grpcFormat, GO_EXAMPLE);
  });

  it("changes each knob alone: reading the written file gives its new value, the file keeps its indentation and comments, and grpc-js accepts it", () => {
    const knobs: Record<string, Record<string, string | undefined>> = {
      "max-attempts": { "max-attempts": "3" },
      "min-delay": { "min-delay": "40ms" },
      "max-delay": { "max-delay": "2s" },
      "backoff-factor": { "backoff-factor": "1.5" },
      budget: { budget: undefined, "budget-tokens": undefined, "budget-ratio": undefined },
      "budget-tokens": { "budget-tokens": "20" },
      "budget-ratio": { "budget-ratio": "0.25" },
    };
    expect(Object.keys(knobs).sort()).toEqual(grpcFormat.knobs.filter((knob) => knob !== "hedge-delay").sort());
    const [retry] = grpcFormat.read(THROTTLED).policies;
    for (const [knob, change] of Object.entries(knobs)) {
      const target = changed(retry!.settings, change);
      const written = writeAndRead(grpcFormat, THROTTLED, 0, target);
      expect(written.settings, knob).toEqual(target);
      grpcJsAccepts(written.text);
      expect(written.text).toContain("// Orders service");
      expect(changedLines(THROTTLED, written.text).removed.length, knob).toBeLessThanOrEqual(knob === "budget" ? 5 : 1);
    }
    const hedged = writeAndRead(
      grpcFormat,
      THROTTLED,
      1,
      changed(grpcFormat.read(THROTTLED).policies[1]!.settings, { "hedge-delay": "20ms" }),
    );
    expect(hedged.settings["hedge-delay"]).toBe("20ms");
    expect(changedLines(THROTTLED, hedged.text)).toEqual({
      added: ['        "hedgingDelay": "0.02s",'],
      removed: ['        "hedgingDelay": "0.05s",'],
    });
    grpcJsAccepts(hedged.text);
  });

  it("switches between retrying, hedging and one attempt, adding what A6 requires, and says the nearest for what gRPC caps", () => {
    const [retry, hedge, none] = grpcFormat.read(THROTTLED).policies;
    const toHedge = writeAndRead(
      grpcFormat,
      THROTTLED,
      0,
      changed(retry!.settings, {
        strategy: "fixed",
        "hedge-delay": "30ms",
        "min-delay": undefined,
        "max-delay": undefined,
        "backoff-factor": undefined,
        jitter: undefined,
      }),
    );
    expect(toHedge.settings).toEqual(changed(hedge!.settings, { "max-attempts": "4", "hedge-delay": "30ms" }));
    const toRetry = writeAndRead(grpcFormat, THROTTLED, 2, { ...retry!.settings, "max-attempts": "3" });
    expect(toRetry.settings).toEqual({ ...retry!.settings, "max-attempts": "3" });
    expect(toRetry.notes.join(" ")).toMatch(/retryableStatusCodes UNAVAILABLE is added/);
    const toNone = writeAndRead(grpcFormat, THROTTLED, 0, changed(retry!.settings, { "max-attempts": "1" }));
    expect(toNone.settings).toEqual(none!.settings);
    const capped = writeAndRead(grpcFormat, THROTTLED, 0, changed(retry!.settings, { "max-attempts": "9" }));
    expect(capped.settings["max-attempts"]).toBe("5");
    expect(capped.notes.join(" ")).toMatch(/at most 5 attempts/);
    for (const text of [toHedge.text, toRetry.text, toNone.text, capped.text]) grpcJsAccepts(text);
  });

  it("says what gRPC cannot express, and why", () => {
    const [retry, hedge] = grpcFormat.read(THROTTLED).policies;
    const why = (index: number, target: Record<string, string>) => {
      const written = grpcFormat.write(THROTTLED, index, target);
      return written.kind === "inexpressible" ? written.why : "written";
    };
    expect(why(0, changed(retry!.settings, { strategy: "full-jitter", "backoff-factor": undefined, jitter: undefined }))).toMatch(
      /cannot say -strategy full-jitter/,
    );
    expect(why(0, changed(retry!.settings, { jitter: "0.5" }))).toMatch(/cannot say -strategy grpc -jitter 0.5/);
    expect(why(0, changed(retry!.settings, { budget: "envoy", "budget-tokens": undefined, "budget-ratio": undefined }))).toMatch(
      /cannot say -budget envoy/,
    );
    expect(why(0, { ...retry!.settings, breaker: "consecutive" })).toMatch(/no field for -breaker consecutive/);
    expect(why(0, { ...retry!.settings, timeout: "500ms" })).toMatch(/no field for -timeout 500ms/);
    expect(why(1, { ...hedge!.settings, "min-delay": "10ms" })).toMatch(/hedged method has no backoff/);
  });
});

describe("gRPC service config: against the real grpc-js", () => {
  afterEach(() => vi.restoreAllMocks());

  it("grpc-js waits exactly what our grpc strategy waits for the settings read from the file (grpc-go's example, Math.random pinned)", async () => {
    const echo = unaryDefinition("grpc.examples.echo.Echo", "UnaryEcho");
    const { port, arrivals, stop } = await startUnaryServer(echo, unavailable);
    const Client = grpc.makeGenericClientConstructor(echo, "Echo");
    const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
      "grpc.service_config": JSON.stringify(parse(GO_EXAMPLE)),
    });
    const settings = grpcFormat.read(GO_EXAMPLE).policies[0]!.settings;
    try {
      for (const u of [0, 0.5, 0.999]) {
        vi.spyOn(Math, "random").mockReturnValue(u);
        const asked = retryTimers();
        const before = arrivals.length;
        const code = await new Promise<number>((done) =>
          (client.UnaryEcho as (request: Buffer, callback: (error: grpc.ServiceError | null) => void) => void).call(
            client,
            Buffer.alloc(0),
            (error) => done(error?.code ?? 0),
          ),
        );
        vi.restoreAllMocks();
        expect(code).toBe(grpc.status.UNAVAILABLE);
        // maxAttempts 7 in the file: gRPC makes 5, as the reading says.
        expect(arrivals.length - before).toBe(Number(settings["max-attempts"]));
        const ours = policyWaits(winnerIntent(settings), 4, u);
        expect(asked).toHaveLength(4);
        asked.forEach((wait, index) => expect(wait, `u=${u}, retry ${index + 1}`).toBeCloseTo(ours[index]!, 6));
      }
    } finally {
      client.close();
      await stop();
    }
  });
});

/** The delays grpc-js asks setTimeout for from its retry decision (RetryingCall.maybeRetryCall). */
function retryTimers(): number[] {
  const delays: number[] = [];
  const original = globalThis.setTimeout;
  vi.spyOn(globalThis, "setTimeout").mockImplementation(((callback: () => void, delay?: number) => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 50;
    const stack = new Error().stack ?? "";
    Error.stackTraceLimit = limit;
    if (stack.includes("maybeRetryCall")) delays.push(delay ?? 0);
    return original(callback, delay);
  }) as typeof setTimeout);
  return delays;
}

// grpc-go's retry example, https://github.com/grpc/grpc-go/blob/master/examples/features/retry/client/main.go
// (the service config string it passes to grpc.WithDefaultServiceConfig; the same in that folder's
// README.md), copied as published: its field names are capitalized and its durations have no
// digit before the point, both of which grpc-go reads (encoding/json matches field names whatever
// their case; internal/serviceconfig's Duration takes ".01s") and grpc-js refuses.
describe("the example from grpc-go's documentation", () => {
  const example = fixture("grpc", "docs-grpc-go-retry.json");
  const at = "methodConfig[0].retryPolicy";

  it("reads it as grpc-go does, field by field, saying where grpc-js would refuse it", () => {
    const [only, ...others] = grpcFormat.read(example).policies;
    expect(others).toEqual([]);
    expect(only!.name).toBe("methodConfig[0] (grpc.examples.echo.Echo)");
    expect(only!.settings).toEqual({
      strategy: "grpc",
      "max-attempts": "4",
      "min-delay": "10ms",
      "max-delay": "10ms",
      "backoff-factor": "1",
      jitter: "0.2",
    });
    expect(fieldsOf(only!)).toEqual({
      [`${at}.maxAttempts`]: ["4", { "max-attempts": "4" }],
      [`${at}.initialBackoff`]: [".01s", { strategy: "grpc", "min-delay": "10ms", jitter: "0.2" }],
      [`${at}.maxBackoff`]: [".01s", { "max-delay": "10ms" }],
      [`${at}.backoffMultiplier`]: ["1", { "backoff-factor": "1" }],
      retryThrottling: ["absent", {}],
    });
    expect(unmodeledOf(only!)).toEqual({ [`${at}.retryableStatusCodes`]: '["UNAVAILABLE"]', "methodConfig[0].waitForReady": "true" });
    const approximation = (name: string) => only!.fields.find((field) => field.field === `${at}.${name}`)!.approximation;
    expect(approximation("maxAttempts")).toMatch(/the file spells it MaxAttempts: grpc-go reads it.*grpc-js/);
    expect(approximation("maxBackoff")).toMatch(/MaxBackoff.*\.01s: grpc-go reads it as 0\.01s; grpc-js .* rejects/);
    expect(only!.unmodeled[0]!.why).toMatch(/the file spells it RetryableStatusCodes/);
    expectSimulatorTakes(only!.settings);
    // What the notes say of grpc-js: its own validation refuses the file as published.
    expect(() => validateServiceConfig(parse(example))).toThrow(/maxAttempts/);
  });

  it("writes a change into the file's own spelling, and a no-op write changes nothing", () => {
    expectNoOpWrites(grpcFormat, example);
    const policy = grpcFormat.read(example).policies[0]!;
    const { text, settings } = writeAndRead(
      grpcFormat,
      example,
      0,
      changed(policy.settings, { "max-attempts": "5", "min-delay": "20ms", "max-delay": "20ms" }),
    );
    expect(settings).toEqual({ ...policy.settings, "max-attempts": "5", "min-delay": "20ms", "max-delay": "20ms" });
    expect(changedLines(example, text)).toEqual({
      added: ['\t\t\t  "MaxAttempts": 5,', '\t\t\t  "InitialBackoff": "0.02s",', '\t\t\t  "MaxBackoff": "0.02s",'],
      removed: ['\t\t\t  "MaxAttempts": 4,', '\t\t\t  "InitialBackoff": ".01s",', '\t\t\t  "MaxBackoff": ".01s",'],
    });
  });
});
