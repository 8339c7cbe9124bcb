import * as cockatiel from "cockatiel";
import { parse } from "jsonc-parser";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type CircuitBreakerConfig, CircuitBreakers } from "../../../../src/backoff/circuit-breaker.ts";
import { seededRandom } from "../../../../src/backoff/random.ts";
import { cockatielFormat } from "../../../../src/check/formats/cockatiel.ts";
import { awsDecorrelatedMeans, decorrelatedV2Means, resolveTarget } from "../../../../src/check/formats/json-options.ts";
import { changedLines, configError, expectRoundTrips, fixture, writtenText } from "../../../helpers/check-js-formats.ts";
import { expectSimulatorTakes, fieldsOf, unmodeledOf } from "../../../helpers/config-formats.ts";
import { meanWaitSequence, observeRetries, policyWaits, winnerIntent } from "../../../helpers/snippets.ts";

const read = (text: string) => cockatielFormat.read(text).policies;
const FIXTURES = ["inventory.json", "defaults-sampling.json", "named.json"];

describe("cockatiel: reading", () => {
  it("reads each field of a realistic file into our flags, with its source", () => {
    const [policy] = read(fixture("cockatiel", "inventory.json"));
    expect(policy!.settings).toEqual({
      "max-attempts": "5",
      strategy: "full-jitter",
      "min-delay": "200ms",
      "max-delay": "10s",
      breaker: "consecutive",
      "breaker-failures": "5",
      "breaker-break": "10s",
    });
    expect(policy!.fields.map((field) => [field.field, field.value])).toEqual([
      ["retry.maxAttempts", "4"],
      ["retry.backoff.generator", "fullJitter"],
      ["retry.backoff.initialDelay", "200"],
      ["retry.backoff.maxDelay", "10000"],
      ["circuitBreaker.halfOpenAfter", "10000"],
      ["circuitBreaker.breaker.threshold", "5"],
    ]);
    expect(policy!.fields.map((field) => field.settings)).toEqual([
      { "max-attempts": "5" },
      { strategy: "full-jitter" },
      { "min-delay": "200ms" },
      { "max-delay": "10s" },
      { "breaker-break": "10s" },
      { breaker: "consecutive", "breaker-failures": "5" },
    ]);
    expect(policy!.fields.every((field) => field.source.includes("github.com/connor4312/cockatiel"))).toBe(true);
    expect(policy!.unmodeled).toEqual([]);
  });

  it("applies cockatiel's defaults and says so, with decorrelated jitter's difference from ours in numbers", () => {
    const [policy] = read(fixture("cockatiel", "defaults-sampling.json"));
    expect(policy!.settings).toEqual({
      "max-attempts": "0",
      strategy: "decorrelated-jitter",
      "min-delay": "128ms",
      "max-delay": "30s",
      breaker: "sampling",
      "breaker-ratio": "0.2",
      "breaker-window": "30s",
      "breaker-min-throughput": "300",
      "breaker-break": "10s",
    });
    const value = (name: string) => policy!.fields.find((field) => field.field === name)!;
    expect(value("retry.maxAttempts").value).toBe("default (Infinity)");
    expect(value("retry.backoff.initialDelay").value).toBe("default (128)");
    expect(value("retry.backoff.generator").approximation).toContain("mean waits 112ms, 148ms, 266ms, 528ms, 1.056s before the cap");
    expect(value("retry.backoff.generator").approximation).toContain("mean waits 256ms, 448ms, 736ms, 1.168s, 1.816s");
    expect(value("circuitBreaker.breaker.minimumRps").approximation).toContain("duration x minimumRps");
  });

  it("reads a map of policies, a constant backoff, the generator's exported name, and SamplingBreaker's default minimumRps", () => {
    const [payments, search] = read(fixture("cockatiel", "named.json"));
    expect(payments!.name).toBe('policy "payments"');
    expect(payments!.settings).toEqual({ "max-attempts": "3", strategy: "fixed", "simple-backoff-delay": "500ms" });
    expect(search!.settings).toMatchObject({
      strategy: "grpc",
      "min-delay": "100ms",
      "max-delay": "5s",
      "backoff-factor": "2",
      jitter: "0",
    });
    // 5 failures a second needed by default: 5 / 0.5 = 10 calls a second over 10 s.
    expect(search!.settings).toMatchObject({ breaker: "sampling", "breaker-min-throughput": "100", "breaker-window": "10s" });
    expect(search!.fields.find((field) => field.field.endsWith("minimumRps"))!.value).toBe("default (5 / threshold = 10)");
  });

  it("names what it does not model: an exponent no generator but decorrelatedJitter reads, a CountBreaker, unknown members", () => {
    const text = JSON.stringify({
      retry: { backoff: { type: "exponential", generator: "noJitter", exponent: 3, jitter: true }, onRetry: "log" },
      circuitBreaker: { halfOpenAfter: 1000, breaker: { type: "count", threshold: 0.2, size: 100 } },
    });
    const [policy] = read(text);
    expect(policy!.unmodeled.map((field) => [field.field, field.why.split(";")[0]])).toEqual([
      ["retry.backoff.exponent", "cockatiel's noJitter generator ignores it: it doubles (initialDelay * 2 ** attempt)"],
      ["retry.backoff.jitter", "not an option of ExponentialBackoff"],
      ["retry.onRetry", "not an option of retry()"],
      [
        "circuitBreaker.breaker",
        "a CountBreaker (the last `size` calls) has no counterpart in our model, which has consecutive and time-window breakers",
      ],
    ]);
    expect(policy!.settings.breaker).toBeUndefined();
  });

  it("refuses a bad file with one line naming the field", () => {
    const retry = (backoff: unknown) => JSON.stringify({ retry: { backoff } });
    expect(configError(() => read('{ "retry": { "maxAttempts": "3" } }'))).toBe(
      'retry.maxAttempts: "3" is not a number, a whole number of retries, 0 or more',
    );
    expect(configError(() => read('{ "retry": { "maxAttempts": -1 } }'))).toContain("-1 is below 0");
    expect(configError(() => read(retry({ type: "exponential", initialDelay: -5 })))).toBe(
      "retry.backoff.initialDelay: -5 is below 0, milliseconds, 0 or more",
    );
    expect(configError(() => read(retry({ type: "exponential", generator: "wildJitter" })))).toContain(
      'retry.backoff.generator: "wildJitter" is not a generator, one of noJitter',
    );
    expect(configError(() => read(retry({ type: "iterable", durations: [1] })))).toContain(
      'retry.backoff.type: "iterable" is not a backoff of this form',
    );
    expect(configError(() => read(retry({ type: "constant" })))).toBe(
      "retry.backoff.interval: missing, ConstantBackoff's interval in milliseconds",
    );
    expect(configError(() => read('{ "circuitBreaker": { "breaker": { "type": "consecutive", "threshold": 5 } } }'))).toContain(
      "circuitBreaker.halfOpenAfter: missing",
    );
    expect(
      configError(() =>
        read('{ "circuitBreaker": { "halfOpenAfter": 1, "breaker": { "type": "sampling", "threshold": 1.5, "duration": 1 } } }'),
      ),
    ).toContain("circuitBreaker.breaker.threshold: 1.5 is not below 1");
    expect(configError(() => read('{ "retries": 3 }'))).toMatch(/^not a cockatiel policy/);
    expect(configError(() => read("{ retry: }"))).toMatch(/^line 1, column 3: InvalidSymbol/);
  });

  it("recognizes a cockatiel policy and nothing else", () => {
    for (const name of FIXTURES) expect(cockatielFormat.recognizes(fixture("cockatiel", name)), name).toBe(true);
    expect(cockatielFormat.recognizes(fixture("p-retry", "api-client.json"))).toBe(false);
    expect(cockatielFormat.recognizes('{ "Retry": { "MaxRetryAttempts": 3 } }')).toBe(false);
  });
});

describe("cockatiel: writing", () => {
  it("round-trips every fixture: a no-op write is the same bytes, every knob moved reads back", () => {
    // Every knob that applies to a fixture's policy: 6 for inventory.json, 8 for defaults-sampling.json, 10 for named.json's two.
    const counts = FIXTURES.map((name) => {
      const { moved, inexpressible } = expectRoundTrips(cockatielFormat, fixture("cockatiel", name));
      expect(inexpressible, name).toEqual([]);
      return moved.length;
    });
    expect(counts).toEqual([6, 8, 10]);
  });

  it("changes only the values that must change, keeping comments and the generator's spelling", () => {
    const text = fixture("cockatiel", "inventory.json");
    const settings = read(text)[0]!.settings;
    const written = writtenText(cockatielFormat.write(text, 0, { ...settings, "min-delay": "400ms", "breaker-failures": "8" }), "write");
    expect(changedLines(text, written)).toEqual(['      "initialDelay": 400,', '    "breaker": { "type": "consecutive", "threshold": 8 }']);
    expect(written).toContain("// Calls to the inventory service");
    const named = fixture("cockatiel", "named.json");
    const equal: Record<string, string> = { ...read(named)[1]!.settings, strategy: "equal-jitter" };
    delete equal["backoff-factor"];
    delete equal.jitter;
    expect(changedLines(named, writtenText(cockatielFormat.write(named, 1, equal), "equal"))).toEqual([
      '                "generator": "halfJitterGenerator"',
    ]);
  });

  it("switches breakers and backoffs by replacing their objects, removes a breaker turned off, adds one turned on", () => {
    const named = fixture("cockatiel", "named.json");
    const [payments, search] = read(named);
    const noBreaker = Object.fromEntries(Object.entries(search!.settings).filter(([name]) => !name.startsWith("breaker")));
    expect(read(writtenText(cockatielFormat.write(named, 1, noBreaker), "off"))[1]!.settings.breaker).toBeUndefined();
    const sampling = {
      ...payments!.settings,
      breaker: "sampling",
      "breaker-ratio": "0.25",
      "breaker-window": "20s",
      "breaker-min-throughput": "50",
      "breaker-break": "2s",
    };
    const added = writtenText(cockatielFormat.write(named, 0, sampling), "on");
    expect(read(added)[0]!.settings).toEqual(sampling);
    expect(added).toContain('"minimumRps": 2.5');
    const exponential = { "max-attempts": "3", strategy: "decorrelated-jitter", "min-delay": "50ms", "max-delay": "2s" };
    expect(read(writtenText(cockatielFormat.write(named, 0, exponential), "backoff"))[0]!.settings).toEqual(exponential);
  });

  it("says what it cannot", () => {
    const text = fixture("cockatiel", "inventory.json");
    const base = read(text)[0]!.settings;
    const cases: [Record<string, string>, string][] = [
      [{ ...base, strategy: "grpc", "backoff-factor": "3", jitter: "0.2" }, "a factor of 3 with a ±0.2 spread"],
      [{ ...base, strategy: "table", table: "0,10,100", "min-delay": "", "max-delay": "" }, "no table backoff"],
      [
        { ...base, breaker: "yandex-retry", "breaker-ratio": "0.1", "breaker-failures": "5", "breaker-break": "5s" },
        "no yandex-retry breaker",
      ],
      [{ ...base, budget: "grpc" }, "no retry budget"],
      [{ ...base, timeout: "5s" }, "no per-attempt timeout"],
    ];
    for (const [target, why] of cases) {
      const clean = Object.fromEntries(Object.entries(target).filter(([, value]) => value !== ""));
      if (clean.breaker === "yandex-retry") {
        delete clean["breaker-failures"];
        delete clean["breaker-break"];
      }
      const written = cockatielFormat.write(text, 0, clean);
      expect(written.kind === "inexpressible" ? written.why : "written", JSON.stringify(clean)).toContain(why);
    }
  });
});

/** Near 1 but below it, as Math.random() is. */
const TOP = 1 - 2 ** -20;
/** cockatiel floors its jittered waits to whole milliseconds, and Node waits at least 1 ms for a timer of 0. */
const ROUNDING_MS = 1;

type BackoffJson = { type: string; interval?: number; initialDelay?: number; maxDelay?: number; exponent?: number; generator?: string };

/** The file's retry, built with the real cockatiel exactly as the form says (constructor arguments one to one). */
function realRetry(policy: { retry?: { maxAttempts?: number; backoff?: BackoffJson } }): cockatiel.RetryPolicy {
  const backoff = policy.retry?.backoff;
  const generators = cockatiel as unknown as Record<string, cockatiel.GeneratorFn<unknown>>;
  const built =
    backoff === undefined
      ? undefined
      : backoff.type === "constant"
        ? new cockatiel.ConstantBackoff(backoff.interval!)
        : new cockatiel.ExponentialBackoff({
            ...backoff,
            generator: generators[`${(backoff.generator ?? "decorrelatedJitter").replace(/Generator$/, "")}Generator`]!,
          });
  const maxAttempts = policy.retry?.maxAttempts;
  return cockatiel.retry(cockatiel.handleAll, {
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    ...(built === undefined ? {} : { backoff: built }),
  });
}

describe("cockatiel: the mapping against cockatiel 3.2.1 itself", () => {
  afterEach(() => vi.restoreAllMocks());

  it("waits as our policy at every draw for noJitter, fullJitter, halfJitter and a constant backoff", async () => {
    const generators = ["noJitter", "fullJitter", "halfJitter"].map((generator) => ({
      retry: { maxAttempts: 8, backoff: { type: "exponential", initialDelay: 150, maxDelay: 4000, generator } },
    }));
    const policies = [...generators, ...[0, 1].map((index) => parse(fixture("cockatiel", index === 0 ? "inventory.json" : "named.json")))];
    for (const json of policies.flatMap((policy) => ("payments" in policy ? [policy.payments, policy.search] : [policy]))) {
      const [reading] = read(JSON.stringify(json));
      const retries = Number(reading!.settings["max-attempts"]) - 1;
      for (const u of [0, 0.3, TOP]) {
        const observed = await observeRetries(u, (operation) => realRetry(json).execute(operation));
        const expected = policyWaits(winnerIntent(reading!.settings), retries, u);
        expect(observed.attempts, JSON.stringify(json)).toBe(retries + 1);
        // e.g. noJitter: 150, 300, 600, 1200, 2400, then the 4 s cap; fullJitter at u = 0.3: 45, 90, 180, 360, 720, then 1200.
        observed.waitsMs.forEach((wait, index) =>
          expect(Math.abs(expected[index]! - wait), `${JSON.stringify(json)} u=${u} retry ${index + 1}`).toBeLessThanOrEqual(ROUNDING_MS),
        );
      }
    }
  });

  it("draws decorrelatedJitter with the mean waits the reading's note states, and ours with the means it gives for ours", () => {
    const options = { initialDelay: 128, maxDelay: 1e9, exponent: 2 };
    const backoff = new cockatiel.ExponentialBackoff({ ...options, generator: cockatiel.decorrelatedJitterGenerator });
    const random = seededRandom(38);
    vi.spyOn(Math, "random").mockImplementation(() => random.uniform());
    const runs = 20_000;
    const retries = 5;
    const draws = Array.from({ length: retries }, () => [] as number[]);
    for (let run = 0; run < runs; run++) {
      let step = backoff.next();
      for (let retry = 0; retry < retries; retry++, step = step.next(undefined as never)) draws[retry]!.push(step.duration);
    }
    const stated = decorrelatedV2Means(2, 128, retries);
    draws.forEach((values, index) => {
      const mean = values.reduce((sum, value) => sum + value, 0) / runs;
      const deviation = Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (runs - 1));
      // Four standard errors of 20 000 seeded draws; measured 111.5, 147.5, 266.4, 527.4, 1059.8 ms,
      // stated 111.5, 148.2, 266.0, 528.3, 1055.5.
      expect(Math.abs(mean - stated[index]!), `retry ${index + 1}: ${mean} against ${stated[index]}`).toBeLessThanOrEqual(
        (4 * deviation) / Math.sqrt(runs),
      );
    });
    vi.restoreAllMocks();
    const ours = meanWaitSequence(winnerIntent({ strategy: "decorrelated-jitter", "min-delay": "128ms", "max-delay": "100000s" }), retries);
    ours.forEach((mean, index) => expect(mean / awsDecorrelatedMeans(128, retries)[index]!).toBeCloseTo(1, 1));
  });

  it("opens its breakers after as many failures as ours does for the settings read", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const files = [fixture("cockatiel", "inventory.json"), JSON.stringify(parse(fixture("cockatiel", "named.json")).search)];
      for (const text of files) {
        const json = parse(text) as {
          circuitBreaker: { halfOpenAfter: number; breaker: { type: string; threshold: number; duration: number } };
        };
        const { breaker: config, halfOpenAfter } = json.circuitBreaker;
        const breaker =
          config.type === "consecutive"
            ? new cockatiel.ConsecutiveBreaker(config.threshold)
            : new cockatiel.SamplingBreaker(config as never);
        const real = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter, breaker });
        let failures = 0;
        for (; failures < 1000; failures++) {
          const outcome = await real.execute(() => Promise.reject(new Error("down"))).catch((error: unknown) => error);
          if (outcome instanceof cockatiel.BrokenCircuitError) break;
        }
        const ours = new CircuitBreakers(resolveTarget(read(text)[0]!.settings).fleet.breaker as CircuitBreakerConfig);
        let ourFailures = 0;
        while (ours.stateAt(0) !== "open" && ourFailures < 1000) {
          ours.record(false, false, 0);
          ourFailures++;
        }
        // inventory: 5 in a row; search: a SamplingBreaker needing 10 calls a second over 10 s, 100 failures.
        expect(ourFailures, text).toBe(failures);
        expect(failures, text).toBe(config.type === "consecutive" ? 5 : 100);
      }
    } finally {
      vi.useRealTimers();
    }
  });
});

// cockatiel's README, https://github.com/connor4312/cockatiel#readme (its first example, as in
// node_modules/cockatiel/readme.md, 3.2.1): retry(handleAll, { maxAttempts: 3, backoff: new
// ExponentialBackoff() }) around circuitBreaker(handleAll, { halfOpenAfter: 10 * 1000, breaker:
// new ConsecutiveBreaker(5) }), written in check's JSON form.
describe("the example from cockatiel's documentation", () => {
  it("reads the README's retry and breaker field by field, the ExponentialBackoff's defaults recorded", () => {
    const [only, ...others] = read(fixture("cockatiel", "docs-readme.json"));
    expect(others).toEqual([]);
    expect(only!.settings).toEqual({
      "max-attempts": "4",
      strategy: "decorrelated-jitter",
      "min-delay": "128ms",
      "max-delay": "30s",
      breaker: "consecutive",
      "breaker-failures": "5",
      "breaker-break": "10s",
    });
    expect(fieldsOf(only!)).toEqual({
      "retry.maxAttempts": ["3", { "max-attempts": "4" }],
      "retry.backoff.generator": ["default (decorrelatedJitter)", { strategy: "decorrelated-jitter" }],
      "retry.backoff.initialDelay": ["default (128)", { "min-delay": "128ms" }],
      "retry.backoff.maxDelay": ["default (30000)", { "max-delay": "30s" }],
      "retry.backoff.exponent": ["default (2)", {}],
      "circuitBreaker.halfOpenAfter": ["10000", { "breaker-break": "10s" }],
      "circuitBreaker.breaker.threshold": ["5", { breaker: "consecutive", "breaker-failures": "5" }],
    });
    expect(unmodeledOf(only!)).toEqual({});
    expectSimulatorTakes(only!.settings);
  });

  it("matches the README's own code run with cockatiel 3.2.1: as many attempts, the breaker open after as many failures", async () => {
    const [reading] = read(fixture("cockatiel", "docs-readme.json"));
    // The README's code as it stands, not built from the JSON form.
    const retryPolicy = cockatiel.retry(cockatiel.handleAll, { maxAttempts: 3, backoff: new cockatiel.ExponentialBackoff() });
    const observed = await observeRetries(0.5, (operation) => retryPolicy.execute(operation));
    expect(observed.attempts).toBe(Number(reading!.settings["max-attempts"]));
    const breakerPolicy = cockatiel.circuitBreaker(cockatiel.handleAll, {
      halfOpenAfter: 10 * 1000,
      breaker: new cockatiel.ConsecutiveBreaker(5),
    });
    let failures = 0;
    for (; failures < 100; failures++) {
      const outcome = await breakerPolicy.execute(() => Promise.reject(new Error("down"))).catch((error: unknown) => error);
      if (outcome instanceof cockatiel.BrokenCircuitError) break;
    }
    const ours = new CircuitBreakers(resolveTarget(reading!.settings).fleet.breaker as CircuitBreakerConfig);
    let ourFailures = 0;
    for (; ours.stateAt(0) !== "open" && ourFailures < 100; ourFailures++) ours.record(false, false, 0);
    expect([failures, ourFailures]).toEqual([5, 5]);
  });
});
