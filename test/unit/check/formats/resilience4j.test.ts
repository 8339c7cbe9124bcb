import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { resilience4jFormat, springDurationMs } from "../../../../src/check/formats/resilience4j.ts";
import { ConfigFileError, type PolicyReading } from "../../../../src/check/format.ts";
import type { FlagSettings } from "../../../../src/recommend/settings.ts";
import { expectSimulatorTakes, fieldsOf, unmodeledOf } from "../../../helpers/config-formats.ts";
import { policyWaits, winnerIntent } from "../../../helpers/snippets.ts";

const FIXTURES = resolve(import.meta.dirname, "../../../fixtures/configs/resilience4j");
const APPLICATION = readFileSync(resolve(FIXTURES, "application.yml"), "utf8");
const KEBAB = readFileSync(resolve(FIXTURES, "kebab.yml"), "utf8");

const policiesOf = (text: string) => resilience4jFormat.read(text).policies;
const fieldOf = (reading: PolicyReading, path: string) => reading.fields.find((field) => field.field === path)!;

function writtenText(text: string, index: number, target: FlagSettings): string {
  const written = resilience4jFormat.write(text, index, target);
  if (written.kind !== "written") throw new Error(`inexpressible: ${written.why}`);
  return written.text;
}

function readError(text: string): string {
  try {
    resilience4jFormat.read(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    expect((error as Error).message).not.toContain("\n");
    return (error as Error).message;
  }
  throw new Error("read accepted the file");
}

/** The lines of `after` that are not in `before`, and those of `before` gone from it: what a diff shows. */
function changedLines(before: string, after: string): { added: string[]; removed: string[] } {
  const old = before.split("\n");
  const now = after.split("\n");
  return { added: now.filter((line) => !old.includes(line)), removed: old.filter((line) => !now.includes(line)) };
}

const INVENTORY = {
  strategy: "grpc",
  "backoff-factor": "2",
  "min-delay": "100ms",
  "max-delay": "2s",
  jitter: "0.3",
  "max-attempts": "4",
  breaker: "sampling",
  "breaker-window": "20s",
  "breaker-min-throughput": "10",
  "breaker-ratio": "0.25",
  "breaker-break": "30s",
};

describe("resilience4j: reading application.yml", () => {
  it("reads each retry instance, with the circuit breaker of its name, inheriting configs.default", () => {
    const [inventory, payments, reports] = policiesOf(APPLICATION);
    expect(policiesOf(APPLICATION).map((policy) => policy.name)).toEqual([
      'retry "inventory" with its circuit breaker (resilience4j.retry.instances.inventory)',
      'retry "payments" with its circuit breaker (resilience4j.retry.instances.payments)',
      'retry "reports" (resilience4j.retry.instances.reports)',
    ]);
    expect(inventory!.settings).toEqual(INVENTORY);
    // payments' own waitDuration keeps configs.default's exponential switch and multiplier; there is no ceiling.
    expect(payments!.settings).toEqual({
      strategy: "grpc",
      "backoff-factor": "2",
      jitter: "0",
      "min-delay": "1s",
      "max-delay": "1h0m0s",
      "max-attempts": "3",
      breaker: "sampling",
      "breaker-window": "1m0s",
      "breaker-min-throughput": "20",
      "breaker-ratio": "0.5",
      "breaker-break": "2m0s",
    });
    // reports has no waitDuration: configs.default's whole wait applies.
    expect(reports!.settings).toEqual({
      strategy: "grpc",
      jitter: "0",
      "min-delay": "200ms",
      "backoff-factor": "2",
      "max-delay": "1h0m0s",
      "max-attempts": "2",
    });
    expect(resilience4jFormat.recognizes(APPLICATION)).toBe(true);
    expect(resilience4jFormat.recognizes("[default]\nretry_mode = standard\n")).toBe(false);
  });

  it("names where each value comes from: the instance, the config it inherits, or a default", () => {
    const [inventory, payments, reports] = policiesOf(APPLICATION);
    expect(fieldOf(inventory!, "resilience4j.retry.instances.inventory.waitDuration")).toMatchObject({
      value: "100ms",
      settings: { "min-delay": "100ms" },
    });
    expect(fieldOf(inventory!, "resilience4j.retry.configs.default.exponentialBackoffMultiplier")).toMatchObject({ value: "2" });
    expect(fieldOf(inventory!, "resilience4j.retry.configs.default.maxAttempts")).toMatchObject({
      value: "4",
      settings: { "max-attempts": "4" },
    });
    expect(fieldOf(inventory!, "resilience4j.retry.instances.inventory.exponentialMaxWaitDuration").approximation).toContain(
      "caps the randomized wait",
    );
    expect(fieldOf(inventory!, "resilience4j.circuitbreaker.configs.default.slidingWindowSize").approximation).toContain(
      "COUNT_BASED counts the last 20 calls",
    );
    expect(fieldOf(inventory!, "resilience4j.circuitbreaker.instances.inventory.slidingWindowType")).toMatchObject({
      value: "default (COUNT_BASED)",
      settings: { breaker: "sampling" },
    });
    const ceiling = fieldOf(payments!, "resilience4j.retry.instances.payments.exponentialMaxWaitDuration");
    expect(ceiling).toMatchObject({ value: "default (none)", settings: { "max-delay": "1h0m0s" } });
    expect(ceiling.approximation).toContain("which no retry reaches");
    expect(fieldOf(payments!, "resilience4j.circuitbreaker.instances.payments.failureRateThreshold")).toMatchObject({
      value: "default (50)",
    });
    expect(fieldOf(reports!, "resilience4j.retry.configs.default.waitDuration")).toMatchObject({ value: "200ms" });
    for (const field of [...inventory!.fields, ...payments!.fields]) expect(field.source).toMatch(/https:\/\//);
  });

  it("names every field it does not model, the inherited ones too", () => {
    const [inventory, payments] = policiesOf(APPLICATION);
    expect(inventory!.unmodeled.map((field) => field.field)).toEqual([
      "resilience4j.retry.configs.default.retryExceptions",
      "resilience4j.circuitbreaker.instances.inventory.permittedNumberOfCallsInHalfOpenState",
    ]);
    expect(payments!.unmodeled.map((field) => [field.field, field.value])).toEqual([
      ["resilience4j.retry.instances.payments.ignoreExceptions", '["com.example.PaymentDeclinedException"]'],
      ["resilience4j.retry.configs.default.retryExceptions", '["java.io.IOException","java.util.concurrent.TimeoutException"]'],
      ["resilience4j.circuitbreaker.instances.payments.slowCallDurationThreshold", "5s"],
      ["resilience4j.circuitbreaker.instances.payments.recordExceptions", '["java.io.IOException"]'],
    ]);
    expect(payments!.unmodeled[0]!.why).toContain("retryable");
  });

  it("reads kebab-case keys, a bare number as milliseconds, and a count window at 100 % as failures in a row", () => {
    const [catalog] = policiesOf(KEBAB);
    expect(catalog!.settings).toEqual({
      strategy: "grpc",
      "min-delay": "250ms",
      "backoff-factor": "1.5",
      "max-delay": "5s",
      jitter: "0.5",
      "max-attempts": "5",
      breaker: "consecutive",
      "breaker-failures": "5",
      "breaker-break": "10s",
    });
  });

  it("applies resilience4j's defaults: 3 attempts, 500 ms, multiplier 1.5, factor 0.5; a constant wait", () => {
    const constant = policiesOf("resilience4j.retry.instances.a: {}\n")[0]!;
    expect(constant.settings).toEqual({
      strategy: "grpc",
      "backoff-factor": "1",
      jitter: "0",
      "min-delay": "500ms",
      "max-delay": "500ms",
      "max-attempts": "3",
    });
    expect(constant.fields.map((field) => field.value)).toEqual(["default (false)", "default (false)", "default (500ms)", "default (3)"]);
    const both = policiesOf(
      "resilience4j.retry.instances.a:\n  waitDuration: 1s\n  enableExponentialBackoff: true\n  enableRandomizedWait: true\n",
    )[0]!;
    expect(both.settings).toMatchObject({ "backoff-factor": "1.5", jitter: "0.5", "max-delay": "1h0m0s" });
  });

  it("names the properties resilience4j ignores in their combination: a ceiling without a multiplier", () => {
    const reading = policiesOf(
      "resilience4j.retry.instances.a:\n  waitDuration: 1s\n  enableExponentialBackoff: true\n  exponentialMaxWaitDuration: 3s\n",
    )[0]!;
    expect(reading.settings["max-delay"]).toBe("1h0m0s");
    expect(reading.unmodeled).toEqual([
      {
        field: "resilience4j.retry.instances.a.exponentialMaxWaitDuration",
        value: "3s",
        why: "ignored by resilience4j here: a ceiling needs exponentialBackoffMultiplier too",
      },
    ]);
  });

  it("names an instance's own backoff properties as ignored when it has no waitDuration of its own, and checks them still", () => {
    const text = "resilience4j.retry:\n  configs.default:\n    waitDuration: 1s\n  instances.a:\n    enableExponentialBackoff: true\n";
    const reading = policiesOf(text)[0]!;
    expect(reading.settings).toMatchObject({ "min-delay": "1s", "backoff-factor": "1" });
    expect(reading.unmodeled).toEqual([
      {
        field: "resilience4j.retry.instances.a.enableExponentialBackoff",
        value: "true",
        why: "ignored by resilience4j here: without its own waitDuration, the wait is its base's",
      },
    ]);
  });

  it("gives settings the simulator takes, for every policy of every fixture", () => {
    for (const text of [APPLICATION, KEBAB])
      for (const policy of policiesOf(text)) expect(() => winnerIntent(policy.settings), policy.name).not.toThrow();
  });

  it("reads Spring's durations", () => {
    expect(["500ms", "10s", "2m", "500", "PT0.5S", "PT1M30S", "P1DT1H", "-PT1S", "1d", "100us"].map(springDurationMs)).toEqual([
      500, 10_000, 120_000, 500, 500, 90_000, 90_000_000, -1000, 86_400_000, 0.1,
    ]);
    expect(["1.5s", "10 s", "ten", "PT", "P", "10x"].map(springDurationMs)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it.each([
    [
      "resilience4j.retry.instances.a:\n  maxAttempts: 0\n",
      'resilience4j.retry.instances.a.maxAttempts: "0" is not allowed, a whole number of 1 or more is',
    ],
    [
      "resilience4j.retry.instances.a:\n  maxAttempts: three\n",
      'resilience4j.retry.instances.a.maxAttempts: "three" is not allowed, a whole number of 1 or more is',
    ],
    [
      "resilience4j.retry.instances.a:\n  waitDuration: 1.5s\n",
      'resilience4j.retry.instances.a.waitDuration: "1.5s" is not allowed, a duration is (500ms, 10s, PT0.5S, or a whole number of milliseconds)',
    ],
    [
      "resilience4j.retry.instances.a:\n  waitDuration: -1s\n",
      'resilience4j.retry.instances.a.waitDuration: "-1s" is not allowed, a duration of 0 or more is',
    ],
    [
      "resilience4j.retry.instances.a:\n  randomizedWaitFactor: 1\n",
      'resilience4j.retry.instances.a.randomizedWaitFactor: "1" is not allowed, a factor from 0 up to (not including) 1 is',
    ],
    [
      "resilience4j.retry.instances.a:\n  enableExponentialBackoff: yes please\n",
      'resilience4j.retry.instances.a.enableExponentialBackoff: "yes please" is not allowed, true or false is',
    ],
    [
      "resilience4j.retry.instances.a:\n  baseConfig: shared\n",
      'resilience4j.retry.instances.a.baseConfig: "shared" is not allowed, the name of an entry of configs is',
    ],
    [
      "resilience4j.retry.instances.a: {}\nresilience4j.circuitbreaker.instances.a:\n  failureRateThreshold: 0\n",
      'resilience4j.circuitbreaker.instances.a.failureRateThreshold: "0" is not allowed, a percentage above 0 and at most 100 is',
    ],
    [
      "resilience4j.retry.instances.a: {}\nresilience4j.circuitbreaker.instances.a:\n  slidingWindowType: SLIDING\n",
      'resilience4j.circuitbreaker.instances.a.slidingWindowType: "SLIDING" is not allowed, COUNT_BASED or TIME_BASED is',
    ],
    [
      "resilience4j.retry.instances.a: 3\n",
      'resilience4j.retry.instances.a: is not a map of settings, the properties of "a" as key: value',
    ],
    [
      "resilience4j.retry:\n  configs:\n    d: &d { maxAttempts: 4 }\n  instances:\n    a: *d\n",
      'resilience4j.retry.instances.a: the YAML alias *d is not read; say what "a" shares with baseConfig, as resilience4j does',
    ],
    [
      "resilience4j.retry:\n  instances:\n    a: &s { maxAttempts: 4 }\n    b:\n      <<: *s\n      waitDuration: 1s\n",
      'resilience4j.retry.instances.b.<<: a YAML merge key is not read; say what "b" shares with baseConfig, as resilience4j does',
    ],
    [
      "spring:\n  application:\n    name: x\n",
      "not a resilience4j configuration: it has no resilience4j.retry.instances or resilience4j.retry.configs.default",
    ],
    [
      '{"methodConfig": [',
      "not YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 1, column 19",
    ],
    [
      "a: 1\n---\nb: 2\n",
      "not one YAML document: a file of several documents (---) is not read; give the one with resilience4j's settings alone",
    ],
  ])("refuses a wrong file in one line: %j", (text, message) => {
    expect(readError(text)).toBe(message);
  });
});

describe("resilience4j: writing a policy back", () => {
  it("gives the same text, byte for byte, for each policy's own settings", () => {
    for (const text of [APPLICATION, KEBAB])
      policiesOf(text).forEach((policy, index) => expect(writtenText(text, index, policy.settings)).toBe(text));
  });

  /** One knob each: the new value, and what reads back (the same, unless said). */
  const KNOBS: [string, string][] = [
    ["max-attempts", "6"],
    ["min-delay", "150ms"],
    ["max-delay", "3s"],
    ["backoff-factor", "3"],
    ["jitter", "0.1"],
    ["breaker-ratio", "0.4"],
    ["breaker-min-throughput", "15"],
    ["breaker-window", "30s"],
    ["breaker-break", "45s"],
  ];

  it.each(KNOBS)("round-trips %s on every policy: the written file reads as the target, touching only what must change", (knob, value) => {
    for (const text of [APPLICATION, KEBAB]) {
      policiesOf(text).forEach((policy, index) => {
        if (knob.startsWith("breaker-") && policy.settings.breaker !== "sampling") return;
        const target = { ...policy.settings, [knob]: value };
        const written = writtenText(text, index, target);
        expect(policiesOf(written)[index]!.settings, `${policy.name} ${knob}`).toEqual(target);
        // Other policies read as before.
        policiesOf(text).forEach(
          (other, otherIndex) => otherIndex !== index && expect(policiesOf(written)[otherIndex]!.settings).toEqual(other.settings),
        );
      });
    }
  });

  it("edits a value in place, keeping its comment and the rest of the file", () => {
    const written = writtenText(APPLICATION, 1, { ...policiesOf(APPLICATION)[1]!.settings, "min-delay": "2s" });
    expect(changedLines(APPLICATION, written)).toEqual({
      added: ["      waitDuration: PT2S # never hammer the payment provider"],
      removed: ["      waitDuration: PT1S # never hammer the payment provider"],
    });
  });

  it("adds a property to the instance in the file's own style, not to the config other instances share", () => {
    const kebab = writtenText(KEBAB, 0, { ...policiesOf(KEBAB)[0]!.settings, "breaker-break": "20s" });
    expect(changedLines(KEBAB, kebab)).toEqual({
      added: ["        wait-duration-in-open-state: 20s"],
      removed: ["        wait-duration-in-open-state: 10s"],
    });
    const reports = writtenText(APPLICATION, 2, { ...policiesOf(APPLICATION)[2]!.settings, "max-delay": "10s" });
    expect(changedLines(APPLICATION, reports).added).toContain("      exponentialMaxWaitDuration: 10s");
    expect(changedLines(APPLICATION, reports).removed).toEqual([]);
    expect(policiesOf(reports)[0]!.settings).toEqual(policiesOf(APPLICATION)[0]!.settings);
  });

  it("adds a circuit breaker instance of the policy's name, with a note that the code must call it", () => {
    const target = {
      ...policiesOf(APPLICATION)[2]!.settings,
      breaker: "sampling",
      "breaker-window": "10s",
      "breaker-ratio": "0.5",
      "breaker-min-throughput": "5",
      "breaker-break": "15s",
    };
    const written = resilience4jFormat.write(APPLICATION, 2, target);
    expect(written.kind).toBe("written");
    if (written.kind !== "written") return;
    expect(written.notes).toEqual(['the circuit breaker acts only where the code calls it: @CircuitBreaker(name = "reports")']);
    expect(policiesOf(written.text)[2]!.settings).toEqual(target);
    expect(written.text).toContain("    reports:\n      slidingWindowType: TIME_BASED\n      slidingWindowSize: 10\n");
  });

  it("writes failures in a row as a count window at 100 %", () => {
    const target = { ...policiesOf(APPLICATION)[1]!.settings, breaker: "consecutive", "breaker-failures": "7", "breaker-break": "2m" };
    for (const flag of ["breaker-window", "breaker-min-throughput", "breaker-ratio"]) delete (target as Record<string, string>)[flag];
    const written = writtenText(APPLICATION, 1, target);
    expect(policiesOf(written)[1]!.settings).toMatchObject({ breaker: "consecutive", "breaker-failures": "7", "breaker-break": "2m0s" });
  });

  it("writes a constant wait when the multiplier is 1, with a note when the ceiling was below the wait", () => {
    const settings = policiesOf(APPLICATION)[2]!.settings;
    const constant = resilience4jFormat.write(APPLICATION, 2, { ...settings, "backoff-factor": "1" });
    expect(constant.kind === "written" && policiesOf(constant.text)[2]!.settings).toMatchObject({
      "min-delay": "200ms",
      "max-delay": "200ms",
      "backoff-factor": "1",
    });
    expect(constant.kind === "written" && constant.notes).toEqual([
      "with a multiplier of 1 every wait is min(min-delay, max-delay): written as a waitDuration of 200ms",
    ]);
    const fixed = resilience4jFormat.write(APPLICATION, 2, { strategy: "fixed", "simple-backoff-delay": "300ms", "max-attempts": "2" });
    expect(fixed.kind === "written" && policiesOf(fixed.text)[2]!.settings).toMatchObject({
      "min-delay": "300ms",
      "max-delay": "300ms",
      "backoff-factor": "1",
      jitter: "0",
    });
  });

  it.each([
    [{ strategy: "full-jitter", "max-attempts": "3" }, "-strategy full-jitter is none of them"],
    [{ strategy: "grpc", "max-attempts": "0" }, "no limit"],
    [{ strategy: "grpc", "max-attempts": "3", jitter: "1" }, "randomizedWaitFactor is below 1"],
    [{ strategy: "grpc", "max-attempts": "3", budget: "grpc" }, "no setting for -budget"],
    [{ strategy: "grpc", "max-attempts": "3", timeout: "1s" }, "no setting for -timeout"],
    [{ strategy: "grpc", "max-attempts": "3", breaker: "yandex-retry" }, "no yandex-retry breaker"],
    [{ strategy: "grpc", "max-attempts": "3", breaker: "sampling", "breaker-window": "1500ms" }, "whole seconds"],
  ])("says what it cannot express: %j", (target, why) => {
    const written = resilience4jFormat.write(APPLICATION, 2, target);
    expect(written.kind).toBe("inexpressible");
    if (written.kind === "inexpressible") expect(written.why).toContain(why);
  });

  it("cannot switch off a breaker the code calls", () => {
    const { breaker: _breaker, ...target } = policiesOf(APPLICATION)[0]!.settings;
    const written = resilience4jFormat.write(APPLICATION, 0, target);
    expect(written.kind === "inexpressible" && written.why).toContain("@CircuitBreaker");
  });
});

describe("resilience4j: the waits, against IntervalFunction's formula", () => {
  /**
   * IntervalFunction.ofExponentialRandomBackoff(initial, multiplier, factor, max) as resilience4j's source has it: the
   * interval grows from `initial` by (long) (x * multiplier) per attempt; randomize() draws min + random * (max - min + 1)
   * for min, max = interval * (1 ∓ factor); the result is truncated to a long, then capped.
   */
  function resilience4jWait(attempt: number, initialMs: number, multiplier: number, factor: number, maxMs: number, u: number): number {
    let interval = initialMs;
    for (let step = 1; step < attempt; step++) interval = Math.trunc(interval * multiplier);
    const low = interval - factor * interval;
    const high = interval + factor * interval;
    return Math.min(Math.trunc(low + u * (high - low + 1)), maxMs);
  }

  it("draws the waits our reading draws, within resilience4j's whole milliseconds, below the ceiling", () => {
    const inventory = policiesOf(APPLICATION)[0]!.settings; // 100ms x 2^(n-1), ± 30 %, at most 2 s
    const intent = winnerIntent({ ...inventory, "max-attempts": "5" });
    for (const u of [0, 0.25, 0.5, 0.999]) {
      const ours = policyWaits(intent, 4, u);
      const theirs = [1, 2, 3, 4].map((attempt) => resilience4jWait(attempt, 100, 2, 0.3, 2000, u));
      ours.forEach((wait, index) =>
        expect(Math.abs(wait - theirs[index]!), `u=${u} retry ${index + 1}: ${wait} against ${theirs[index]}`).toBeLessThanOrEqual(2),
      );
    }
  });
});

// resilience4j's Spring Boot 3 demo, the one resilience4j.readme.io's "Getting Started" points to:
// https://github.com/resilience4j/resilience4j-spring-boot3-demo/blob/master/src/main/resources/application.yml
// (commit 6c3e644), copied as published.
describe("the example from resilience4j's documentation", () => {
  const example = readFileSync(resolve(FIXTURES, "docs-spring-boot3-demo.yml"), "utf8");
  const retry = "resilience4j.retry.configs.default";
  const breakerDefault = "resilience4j.circuitbreaker.configs.default";
  const constant = {
    strategy: "grpc",
    "backoff-factor": "1",
    jitter: "0",
    "min-delay": "100ms",
    "max-delay": "100ms",
    "max-attempts": "3",
  };
  const retryFields = {
    [`${retry}.enableExponentialBackoff`]: ["default (false)", { strategy: "grpc", "backoff-factor": "1" }],
    [`${retry}.enableRandomizedWait`]: ["default (false)", { jitter: "0" }],
    [`${retry}.waitDuration`]: ["100", { "min-delay": "100ms", "max-delay": "100ms" }],
    [`${retry}.maxAttempts`]: ["3", { "max-attempts": "3" }],
  };
  const retryUnmodeled = {
    [`${retry}.retryExceptions`]:
      '["org.springframework.web.client.HttpServerErrorException","java.util.concurrent.TimeoutException","java.io.IOException"]',
    [`${retry}.ignoreExceptions`]: '["io.github.robwin.exception.BusinessException"]',
  };
  /** configs.default's circuit-breaker properties we do not model, as backendA and backendB inherit them. */
  const inheritedBreaker = {
    [`${breakerDefault}.automaticTransitionFromOpenToHalfOpenEnabled`]: "true",
    [`${breakerDefault}.recordExceptions`]:
      '["org.springframework.web.client.HttpServerErrorException","java.util.concurrent.TimeoutException","java.io.IOException"]',
    [`${breakerDefault}.ignoreExceptions`]: '["io.github.robwin.exception.BusinessException"]',
  };

  it("reads backendA (every setting from configs.default) field by field, naming what we do not model: inherited breaker properties, other modules", () => {
    const [backendA] = policiesOf(example);
    expect(backendA!.name).toBe('retry "backendA" with its circuit breaker (resilience4j.retry.instances.backendA)');
    expect(backendA!.settings).toEqual({
      ...constant,
      breaker: "sampling",
      "breaker-window": "10s",
      "breaker-min-throughput": "5",
      "breaker-ratio": "0.5",
      "breaker-break": "5s",
    });
    expect(fieldsOf(backendA!)).toEqual({
      ...retryFields,
      "resilience4j.circuitbreaker.instances.backendA.slidingWindowType": ["default (COUNT_BASED)", { breaker: "sampling" }],
      [`${breakerDefault}.slidingWindowSize`]: ["10", { "breaker-window": "10s" }],
      [`${breakerDefault}.minimumNumberOfCalls`]: ["5", { "breaker-min-throughput": "5" }],
      [`${breakerDefault}.failureRateThreshold`]: ["50", { "breaker-ratio": "0.5" }],
      [`${breakerDefault}.waitDurationInOpenState`]: ["5s", { "breaker-break": "5s" }],
    });
    expect(unmodeledOf(backendA!)).toEqual({
      ...retryUnmodeled,
      [`${breakerDefault}.registerHealthIndicator`]: "true",
      [`${breakerDefault}.permittedNumberOfCallsInHalfOpenState`]: "3",
      [`${breakerDefault}.eventConsumerBufferSize`]: "10",
      ...inheritedBreaker,
      "resilience4j.bulkhead.instances.backendA": '{"maxConcurrentCalls":10}',
      "resilience4j.thread-pool-bulkhead.instances.backendA": '{"baseConfig":"default"}',
      "resilience4j.ratelimiter.instances.backendA": '{"baseConfig":"default"}',
      "resilience4j.timelimiter.instances.backendA": '{"baseConfig":"default"}',
    });
    expectSimulatorTakes(backendA!.settings);
  });

  it("reads backendB (its own breaker, configs.default beneath it) field by field", () => {
    const [, backendB, ...others] = policiesOf(example);
    expect(others).toEqual([]);
    const own = "resilience4j.circuitbreaker.instances.backendB";
    expect(backendB!.settings).toEqual({
      ...constant,
      breaker: "sampling",
      "breaker-window": "10s",
      "breaker-min-throughput": "10",
      "breaker-ratio": "0.5",
      "breaker-break": "5s",
    });
    expect(fieldsOf(backendB!)).toEqual({
      ...retryFields,
      [`${own}.slidingWindowType`]: ["default (COUNT_BASED)", { breaker: "sampling" }],
      [`${own}.slidingWindowSize`]: ["10", { "breaker-window": "10s" }],
      [`${own}.minimumNumberOfCalls`]: ["10", { "breaker-min-throughput": "10" }],
      [`${own}.failureRateThreshold`]: ["50", { "breaker-ratio": "0.5" }],
      [`${own}.waitDurationInOpenState`]: ["5s", { "breaker-break": "5s" }],
    });
    expect(unmodeledOf(backendB!)).toEqual({
      ...retryUnmodeled,
      [`${own}.registerHealthIndicator`]: "true",
      [`${own}.permittedNumberOfCallsInHalfOpenState`]: "3",
      [`${own}.eventConsumerBufferSize`]: "10",
      [`${own}.recordFailurePredicate`]: "io.github.robwin.exception.RecordFailurePredicate",
      ...inheritedBreaker,
      "resilience4j.bulkhead.instances.backendB": '{"maxWaitDuration":"10ms","maxConcurrentCalls":20}',
      "resilience4j.thread-pool-bulkhead.instances.backendB": '{"maxThreadPoolSize":1,"coreThreadPoolSize":1,"queueCapacity":1}',
      "resilience4j.ratelimiter.instances.backendB": '{"limitForPeriod":6,"limitRefreshPeriod":"500ms","timeoutDuration":"3s"}',
      "resilience4j.timelimiter.instances.backendB": '{"baseConfig":"default"}',
    });
    expect(backendB!.unmodeled.find((field) => field.field.startsWith("resilience4j.timelimiter"))!.why).toMatch(/timeout on each attempt/);
    expectSimulatorTakes(backendB!.settings);
  });
});
