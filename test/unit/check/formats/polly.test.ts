import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../../src/backoff/random.ts";
import { decorrelatedV2Means } from "../../../../src/check/formats/json-options.ts";
import { formatTimeSpan, parseTimeSpan, pollyFormat } from "../../../../src/check/formats/polly.ts";
import { changedLines, configError, expectRoundTrips, fixture, writtenText } from "../../../helpers/check-js-formats.ts";
import { expectSimulatorTakes, fieldsOf, unmodeledOf } from "../../../helpers/config-formats.ts";
import { policyWaits, winnerIntent } from "../../../helpers/snippets.ts";

const read = (text: string) => pollyFormat.read(text).policies;
const FIXTURES = ["appsettings.json", "retry-sections.json", "standard-defaults.json"];

/** A standard pipeline at the file's root with these sections. */
const standard = (sections: Record<string, unknown>) => JSON.stringify({ Resilience: sections });

describe("Polly: reading", () => {
  it("reads an appsettings.json's standard resilience handler field by field, with the HTTP defaults it omits", () => {
    const [policy] = read(fixture("polly", "appsettings.json"));
    expect(policy!.name).toBe("CatalogClient:Resilience (HttpStandardResilienceOptions)");
    expect(policy!.settings).toEqual({
      "max-attempts": "6",
      strategy: "decorrelated-jitter",
      "min-delay": "500ms",
      "max-delay": "10s",
      breaker: "sampling",
      "breaker-ratio": "0.2",
      "breaker-min-throughput": "50",
      "breaker-window": "1m0s",
      "breaker-break": "15s",
      timeout: "5s",
    });
    const field = (name: string) => policy!.fields.find((reading) => reading.field === `CatalogClient.Resilience.${name}`)!;
    expect(field("Retry.BackoffType").value).toBe("default (Exponential)");
    expect(field("Retry.BackoffType").source).toContain("HttpRetryStrategyOptions");
    expect(field("Retry.UseJitter").approximation).toContain("mean waits 436ms, 579ms, 1.039s, 2.064s, 4.123s before the cap");
    expect(field("Retry.Delay").value).toBe("00:00:00.500");
    expect(field("AttemptTimeout.Timeout").settings).toEqual({ timeout: "5s" });
    expect(policy!.fields.every((reading) => /https:\/\//.test(reading.source))).toBe(true);
    expect(policy!.unmodeled.map((reading) => reading.field)).toEqual([
      "CatalogClient.Resilience.Retry.ShouldRetryAfterHeader",
      "CatalogClient.Resilience.TotalRequestTimeout",
    ]);
  });

  it("reads bare RetryStrategyOptions sections with Polly's own defaults, keys in any case, numbers as strings", () => {
    const [orders, inventory] = read(fixture("polly", "retry-sections.json"));
    expect(orders!.settings).toEqual({
      "max-attempts": "5",
      strategy: "grpc",
      "backoff-factor": "2",
      jitter: "0",
      "min-delay": "1s",
      "max-delay": "5s",
    });
    expect(inventory!.name).toBe("Resilience:Inventory (RetryStrategyOptions)");
    expect(inventory!.settings).toEqual({ "max-attempts": "7", strategy: "table", table: "0,200,400,600,800,1000,1200" });
    // A Linear backoff's approximation goes with its Delay, which a write of another table changes.
    expect(inventory!.fields.find((reading) => reading.field.endsWith(".delay"))!.approximation).toContain("no linear strategy");
    expect(inventory!.fields.find((reading) => reading.field.endsWith("backoffType"))!.approximation).toContain(
      "bound to an HttpRetryStrategyOptions",
    );
    expect(orders!.fields.find((reading) => reading.field.endsWith("BackoffType"))!.approximation).toBeUndefined();
  });

  it("reads a section of defaults: 3 retries from 2 s, no cap (TimeSpan.MaxValue), the breaker's 0.1 over 30 s", () => {
    const [policy] = read(fixture("polly", "standard-defaults.json"));
    expect(policy!.settings).toMatchObject({
      "max-attempts": "4",
      "min-delay": "2s",
      "max-delay": "256204778h48m5.477625s",
      "breaker-ratio": "0.1",
      "breaker-min-throughput": "100",
      "breaker-window": "30s",
      "breaker-break": "5s",
      timeout: "2s",
    });
    expect(policy!.fields.filter((reading) => reading.value.startsWith("default (")).length).toBe(9);
  });

  it("reads each backoff type as RetryHelper computes it", () => {
    // Bare RetryStrategyOptions, read with Polly's own defaults.
    const retry = (options: Record<string, unknown>) => read(JSON.stringify(options))[0]!.settings;
    expect(retry({ MaxRetryAttempts: 2, BackoffType: "Constant", Delay: "00:00:01" })).toMatchObject({
      strategy: "fixed",
      "simple-backoff-delay": "1s",
    });
    expect(retry({ MaxRetryAttempts: 2, BackoffType: "constant", UseJitter: "True", Delay: "00:00:01" })).toMatchObject({
      strategy: "grpc",
      "backoff-factor": "1",
      jitter: "0.25",
      "min-delay": "1s",
    });
    expect(retry({ MaxRetryAttempts: 2147483647, BackoffType: 2, UseJitter: false, Delay: "0" })).toMatchObject({
      "max-attempts": "0",
      strategy: "fixed",
      "simple-backoff-delay": "0s",
    });
    expect(retry({ MaxRetryAttempts: 3, BackoffType: "Linear", Delay: "00:00:01", MaxDelay: "00:00:02.5" })).toMatchObject({
      table: "0,1000,2000,2500",
    });
  });

  it("parses TimeSpans as TimeSpan.Parse does, a bare number being days", () => {
    expect(parseTimeSpan("00:00:02", "Delay")).toBe(2000);
    expect(parseTimeSpan("00:00:00.5", "Delay")).toBe(500);
    expect(parseTimeSpan("1.02:03:04.0050000", "Delay")).toBe(93_784_005);
    expect(parseTimeSpan(" 00:01 ", "Delay")).toBe(60_000);
    expect(parseTimeSpan(2, "Delay")).toBe(172_800_000);
    // Microsoft Learn's examples: "0023:0059:0059.0099" is 23:59:59.0099; hours of 24 or more make "hh:mm:ss" days:hours:minutes.
    expect(parseTimeSpan("0023:0059:0059.0099", "Delay")).toBe(86_399_009.9);
    expect(parseTimeSpan("24:00:00", "Delay")).toBe(24 * 86_400_000);
    expect(parseTimeSpan("1:02:03:04", "Delay")).toBe(93_784_000);
    // A TimeSpan holds 100 ns ticks.
    for (const ms of [0, 1, 250, 2000, 61_500, 86_400_000, 0.1234]) expect(parseTimeSpan(formatTimeSpan(ms), "x")).toBeCloseTo(ms, 9);
    expect(formatTimeSpan(500)).toBe("00:00:00.5");
    expect(formatTimeSpan(86_400_000)).toBe("1.00:00:00");
  });

  it("refuses a bad file with one line naming the field", () => {
    const retry = (options: Record<string, unknown>) => () => read(JSON.stringify({ Retry: options }));
    expect(configError(retry({ MaxRetryAttempts: 0 }))).toBe(
      "Retry.MaxRetryAttempts: 0 is out of range, retries after the first call, 1 to 2147483647",
    );
    expect(configError(retry({ MaxRetryAttempts: "three" }))).toContain('Retry.MaxRetryAttempts: "three" is not a whole number');
    expect(configError(retry({ BackoffType: "Fibonacci" }))).toBe(
      'Retry.BackoffType: "Fibonacci" is not a DelayBackoffType, Constant, Linear, Exponential',
    );
    expect(configError(retry({ UseJitter: "maybe" }))).toBe('Retry.UseJitter: "maybe" is not a boolean, true or false');
    expect(configError(retry({ UseJitter: true, Delay: "2s" }))).toContain(
      'Retry.Delay: "2s" is not a TimeSpan, a TimeSpan as .NET\'s configuration binder reads it',
    );
    expect(configError(retry({ UseJitter: true, Delay: 2 }))).toContain(
      "Retry.Delay: 2 (2.00:00:00 to TimeSpan.Parse) is above what Polly's validation allows",
    );
    expect(configError(retry({ UseJitter: true, Delay: "24:00:00" }))).toContain('"24:00:00" (24.00:00:00 to TimeSpan.Parse) is above');
    expect(configError(retry({ UseJitter: true, Delay: "00:61:00" }))).toContain("is out of range");
    expect(configError(retry({ UseJitter: true, Delay: "10.12" }))).toContain("is not a TimeSpan");
    expect(configError(retry({ UseJitter: true, Delay: "-00:00:01" }))).toContain("is below what Polly's validation allows");
    expect(configError(() => read(standard({ CircuitBreaker: { FailureRatio: 0 } })))).toContain(
      "Resilience.CircuitBreaker.FailureRatio: 0 is out of range",
    );
    expect(configError(() => read(standard({ CircuitBreaker: { MinimumThroughput: 1 } })))).toContain("2 or more");
    expect(configError(() => read(standard({ AttemptTimeout: { Timeout: "00:00:20" } })))).toContain(
      "Resilience.CircuitBreaker.SamplingDuration: 00:00:30 is less than twice the attempt timeout (00:00:20)",
    );
    expect(
      configError(() => read(standard({ AttemptTimeout: { Timeout: "00:01:00" }, TotalRequestTimeout: { Timeout: "00:00:30" } }))),
    ).toContain("longer than TotalRequestTimeout");
    expect(configError(() => read('{ "Logging": { "LogLevel": {} } }'))).toMatch(/^no Polly retry options found/);
    expect(configError(() => read('{ "Retry": { "Delay": "00:00:01" '))).toMatch(/^line 1, column 34: CloseBraceExpected/);
  });

  it("recognizes Polly options and nothing else", () => {
    for (const name of FIXTURES) expect(pollyFormat.recognizes(fixture("polly", name)), name).toBe(true);
    expect(pollyFormat.recognizes(fixture("cockatiel", "inventory.json"))).toBe(false);
    expect(pollyFormat.recognizes(fixture("p-retry", "api-client.json"))).toBe(false);
  });
});

describe("Polly: writing", () => {
  it("round-trips every fixture: a no-op write is the same bytes, every knob moved reads back", () => {
    const results = FIXTURES.map((name) => expectRoundTrips(pollyFormat, fixture("polly", name)));
    // The standard handlers move all 8 knobs; the bare sections their retry's (Linear's table has no min-delay or max-delay).
    expect(results.map((result) => result.moved.length)).toEqual([8, 4, 8]);
    // A bare RetryStrategyOptions has no attempt timeout to move.
    expect(results.flatMap((result) => result.inexpressible).map((entry) => entry.split(": ").slice(0, 2).join(": "))).toEqual([
      "Resilience:Orders (RetryStrategyOptions): timeout",
      "Resilience:Inventory (RetryStrategyOptions): timeout",
    ]);
  });

  it("changes only the values that must change, as TimeSpans, keeping comments and the file's JSON types", () => {
    const text = fixture("polly", "appsettings.json");
    const settings = read(text)[0]!.settings;
    const written = writtenText(
      pollyFormat.write(text, 0, { ...settings, "min-delay": "250ms", "breaker-break": "30s", timeout: "8s" }),
      "write",
    );
    expect(changedLines(text, written)).toEqual([
      '        "Delay": "00:00:00.25",',
      '        "BreakDuration": "00:00:30"',
      '        "Timeout": "00:00:08"',
    ]);
    expect(written).toContain("// Bound in Program.cs");
    const sections = fixture("polly", "retry-sections.json");
    const inventory = read(sections)[1]!.settings;
    expect(changedLines(sections, writtenText(pollyFormat.write(sections, 1, { ...inventory, "max-attempts": "3" }), "string"))).toEqual([
      '      "maxRetryAttempts": "2",',
    ]);
    // Another table for a section already Linear: the write says how our table's waits differ from Polly's.
    const table = pollyFormat.write(sections, 1, { ...inventory, table: "0,100,200,300,400,500,600" });
    expect(table.kind === "written" ? table.notes.join("; ") : table.why).toContain("no linear strategy");
  });

  it("keeps a byte order mark and Windows line ends, as Visual Studio saves appsettings.json", () => {
    const text = `\uFEFF${fixture("polly", "retry-sections.json").replaceAll("\n", "\r\n")}`;
    const [orders] = read(text);
    expect(orders!.settings["max-attempts"]).toBe("5");
    const written = writtenText(pollyFormat.write(text, 0, { ...orders!.settings, "max-attempts": "3" }), "crlf");
    expect(written).toBe(text.replace('"MaxRetryAttempts": 4', '"MaxRetryAttempts": 2'));
    expect(writtenText(pollyFormat.write(text, 0, orders!.settings), "no-op")).toBe(text);
  });

  it("adds a section the file omits in its indentation, removes a cap turned off, says no limit as int.MaxValue", () => {
    const text = fixture("polly", "standard-defaults.json");
    const settings = read(text)[0]!.settings;
    const added = writtenText(pollyFormat.write(text, 0, { ...settings, "breaker-ratio": "0.3" }), "added");
    expect(added).toContain('\t\t\t"CircuitBreaker": {\n\t\t\t\t"FailureRatio": 0.3\n\t\t\t}');
    const orders = fixture("polly", "retry-sections.json");
    const uncapped = { ...read(orders)[0]!.settings, "max-delay": settings["max-delay"]!, "max-attempts": "0" };
    // MaxDelay was the section's last member: the line before it loses its comma.
    expect(changedLines(orders, writtenText(pollyFormat.write(orders, 0, uncapped), "uncapped"))).toEqual([
      '      "MaxRetryAttempts": 2147483647,',
      '      "Delay": "00:00:01"',
    ]);
    expect(writtenText(pollyFormat.write(orders, 0, uncapped), "uncapped")).not.toContain("MaxDelay");
  });

  it("says what it cannot", () => {
    const text = fixture("polly", "appsettings.json");
    const base = read(text)[0]!.settings;
    const noBreaker = Object.fromEntries(Object.entries(base).filter(([name]) => !name.startsWith("breaker")));
    const bare = fixture("polly", "retry-sections.json");
    const orders = read(bare)[0]!.settings;
    const cases: [string, Record<string, string>, string][] = [
      [text, noBreaker, "always has its circuit breaker"],
      [text, { ...noBreaker, breaker: "consecutive" }, "no consecutive breaker"],
      [text, { ...base, strategy: "full-jitter" }, "no full-jitter backoff"],
      [text, { ...base, "max-attempts": "1" }, "MaxRetryAttempts is at least 1"],
      [text, { ...base, budget: "envoy" }, "no retry budget"],
      [text, { ...base, timeout: "40s" }, "would refuse it: CatalogClient.Resilience.CircuitBreaker.SamplingDuration"],
      [bare, { ...orders, breaker: "consecutive" }, "has no circuit breaker"],
      [bare, { ...orders, timeout: "5s" }, "no per-attempt timeout"],
    ];
    for (const [file, target, why] of cases) {
      const written = pollyFormat.write(file, 0, target);
      expect(written.kind === "inexpressible" ? written.why : "written", JSON.stringify(target)).toContain(why);
    }
  });

  it("writes the nearest Polly can say, with a note, where its validation bounds a value", () => {
    const text = fixture("polly", "appsettings.json");
    const written = pollyFormat.write(text, 0, { ...read(text)[0]!.settings, "breaker-min-throughput": "1" });
    expect(written.kind === "written" && written.notes.join("\n")).toContain("the nearest Polly can say");
    expect(changedLines(text, writtenText(written, "nearest"))).toEqual(['        "MinimumThroughput": 2,']);
  });
});

/**
 * Polly's RetryHelper.GetRetryDelay (Polly.Core, src/Polly.Core/Retry/RetryHelper.cs), transcribed:
 * there is no .NET here, so the mapping is checked against the library's own code as written.
 * `attempt` counts from 0 for the first retry, as Polly's does.
 */
function pollyDelay(
  type: string,
  jitter: boolean,
  attempt: number,
  delayMs: number,
  maxDelayMs: number,
  u: number,
  state: { prev: number },
): number {
  let delay: number;
  if (delayMs === 0) delay = 0;
  else if (jitter && type === "Exponential") {
    const t = attempt + u;
    const next = 2 ** t * Math.tanh(Math.sqrt(4 * t));
    delay = (next - state.prev) * (1 / 1.4) * delayMs;
    state.prev = next;
  } else {
    const base = type === "Constant" ? delayMs : type === "Linear" ? (attempt + 1) * delayMs : 2 ** attempt * delayMs;
    // ApplyJitter: delay + delay x 0.5 x random - delay x 0.5 / 2.
    delay = jitter ? base + base * 0.5 * u - (base * 0.5) / 2 : base;
  }
  return Math.min(delay, maxDelayMs);
}

describe("Polly: the mapping against RetryHelper's formulas", () => {
  it("waits as Polly's Constant, Constant with jitter and Exponential at every draw", () => {
    const cases = [
      { BackoffType: "Constant", UseJitter: false, Delay: "00:00:00.300" },
      { BackoffType: "Constant", UseJitter: true, Delay: "00:00:00.300" },
      { BackoffType: "Exponential", UseJitter: false, Delay: "00:00:00.100", MaxDelay: "00:00:03" },
    ];
    for (const options of cases) {
      const [policy] = read(JSON.stringify({ Retry: { MaxRetryAttempts: 8, ...options } }));
      for (const u of [0, 0.3, 0.999]) {
        const ours = policyWaits(winnerIntent(policy!.settings), 8, u);
        const maxMs = options.MaxDelay === undefined ? Infinity : 3000;
        const delayMs = parseTimeSpan(options.Delay, "Delay");
        // e.g. Exponential: 100, 200, 400, 800, 1600, 3000, 3000, 3000 ms; Constant with jitter at u = 0.3: 270 ms each.
        const theirs = ours.map((_, attempt) =>
          pollyDelay(options.BackoffType, options.UseJitter, attempt, delayMs, maxMs, u, { prev: 0 }),
        );
        ours.forEach((wait, index) => expect(wait, `${JSON.stringify(options)} u=${u}`).toBeCloseTo(theirs[index]!, 6));
      }
    }
  });

  it("draws Exponential with jitter with the mean waits the reading's note states", () => {
    const random = seededRandom(6);
    const runs = 20_000;
    const draws = Array.from({ length: 4 }, () => [] as number[]);
    for (let run = 0; run < runs; run++) {
      const state = { prev: 0 };
      for (let attempt = 0; attempt < 4; attempt++)
        draws[attempt]!.push(pollyDelay("Exponential", true, attempt, 500, Infinity, random.uniform(), state));
    }
    const stated = decorrelatedV2Means(2, 500, 4);
    draws.forEach((values, index) => {
      const mean = values.reduce((sum, value) => sum + value, 0) / runs;
      const deviation = Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (runs - 1));
      // Four standard errors of 20 000 seeded draws; measured 438.5, 577.5, 1039.3, 2063.0 ms against the note's 436, 579, 1039, 2064.
      expect(Math.abs(mean - stated[index]!), `retry ${index + 1}`).toBeLessThanOrEqual((4 * deviation) / Math.sqrt(runs));
    });
  });
});

// Microsoft Learn, "Build resilient HTTP apps: Key development patterns",
// https://learn.microsoft.com/en-us/dotnet/core/resilience/http-resilience (its appsettings.json,
// dotnet/docs docs/core/resilience/snippets/http-resilience/appsettings.json), copied as published.
// Two versions of that file were found: one says "Backoff" (a key HttpRetryStrategyOptions does
// not have) and 3 retries, the other "BackoffType" and 7; both are read.
describe("the example from Microsoft Learn's documentation", () => {
  const standardDefaults = {
    breaker: "sampling",
    "breaker-ratio": "0.1",
    "breaker-min-throughput": "100",
    "breaker-window": "30s",
    "breaker-break": "5s",
    timeout: "10s",
  };
  const standardDefaultFields = {
    "RetryOptions.CircuitBreaker.FailureRatio": ["default (0.1)", { breaker: "sampling", "breaker-ratio": "0.1" }],
    "RetryOptions.CircuitBreaker.MinimumThroughput": ["default (100)", { "breaker-min-throughput": "100" }],
    "RetryOptions.CircuitBreaker.SamplingDuration": ["default (00:00:30)", { "breaker-window": "30s" }],
    "RetryOptions.CircuitBreaker.BreakDuration": ["default (00:00:05)", { "breaker-break": "5s" }],
    "RetryOptions.AttemptTimeout.Timeout": ["default (00:00:10)", { timeout: "10s" }],
  };

  it('reads the "Backoff" version field by field: the binder ignores Backoff, so the HTTP default, exponential, holds', () => {
    const [only, ...others] = read(fixture("polly", "docs-http-resilience.json"));
    expect(others).toEqual([]);
    expect(only!.name).toBe("RetryOptions (HttpStandardResilienceOptions)");
    const uncapped = "256204778h48m5.477625s";
    expect(only!.settings).toEqual({
      "max-attempts": "4",
      strategy: "grpc",
      "backoff-factor": "2",
      jitter: "0",
      "min-delay": "2s",
      "max-delay": uncapped,
      ...standardDefaults,
    });
    expect(fieldsOf(only!)).toEqual({
      "RetryOptions.Retry.MaxRetryAttempts": ["3", { "max-attempts": "4" }],
      "RetryOptions.Retry.BackoffType": ["default (Exponential)", { strategy: "grpc", "backoff-factor": "2", jitter: "0" }],
      "RetryOptions.Retry.UseJitter": ["false", {}],
      "RetryOptions.Retry.Delay": ["default (00:00:02)", { "min-delay": "2s" }],
      "RetryOptions.Retry.MaxDelay": ["default (none)", { "max-delay": uncapped }],
      ...standardDefaultFields,
    });
    expect(unmodeledOf(only!)).toEqual({ "RetryOptions.Retry.Backoff": "Linear" });
    expect(only!.unmodeled[0]!.why).toMatch(/not a property of HttpRetryStrategyOptions; the configuration binder ignores it/);
    expectSimulatorTakes(only!.settings);
  });

  it('reads the "BackoffType" version field by field: seven linear retries, 2 s apart', () => {
    const [only, ...others] = read(fixture("polly", "docs-http-resilience-linear.json"));
    expect(others).toEqual([]);
    const table = "0,2000,4000,6000,8000,10000,12000,14000";
    expect(only!.settings).toEqual({ "max-attempts": "8", strategy: "table", table, ...standardDefaults });
    expect(fieldsOf(only!)).toEqual({
      "RetryOptions.Retry.MaxRetryAttempts": ["7", { "max-attempts": "8" }],
      "RetryOptions.Retry.BackoffType": ["Linear", { strategy: "table" }],
      "RetryOptions.Retry.UseJitter": ["false", {}],
      "RetryOptions.Retry.Delay": ["default (00:00:02)", { table }],
      "RetryOptions.Retry.MaxDelay": ["default (none)", {}],
      ...standardDefaultFields,
    });
    expect(unmodeledOf(only!)).toEqual({});
    expectSimulatorTakes(only!.settings);
  });
});
