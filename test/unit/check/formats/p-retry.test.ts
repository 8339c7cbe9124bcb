import { parse } from "jsonc-parser";
import pRetry, { type Options } from "p-retry";
import { afterEach, describe, expect, it, vi } from "vitest";
import { pRetryFormat } from "../../../../src/check/formats/p-retry.ts";
import { changedLines, configError, expectRoundTrips, fixture, writtenText } from "../../../helpers/check-js-formats.ts";
import { expectSimulatorTakes, fieldsOf, unmodeledOf } from "../../../helpers/config-formats.ts";
import { observeRetries, policyWaits, winnerIntent } from "../../../helpers/snippets.ts";

const read = (text: string) => pRetryFormat.read(text).policies;

describe("p-retry options: reading", () => {
  it("reads each field of a realistic file into our flags, and names maxRetryTime as not modelled", () => {
    const [policy] = read(fixture("p-retry", "api-client.json"));
    expect(policy!.settings).toEqual({
      "max-attempts": "6",
      strategy: "grpc",
      jitter: String(1 / 3),
      "min-delay": "300ms",
      "max-delay": "5s",
      "backoff-factor": "2",
    });
    expect(policy!.fields.map((field) => [field.field, field.value])).toEqual([
      ["retries", "5"],
      ["randomize", "true"],
      ["minTimeout", "200"],
      ["maxTimeout", "5000"],
      ["factor", "2"],
    ]);
    expect(policy!.fields.find((field) => field.field === "randomize")!.approximation).toContain("U(2/3, 4/3)");
    expect(policy!.fields.every((field) => field.source.includes("https://github.com/sindresorhus/p-retry"))).toBe(true);
    expect(policy!.unmodeled).toEqual([expect.objectContaining({ field: "maxRetryTime", value: "20000" })]);
  });

  it("applies p-retry's documented defaults and says so; no cap is Node's longest timer", () => {
    const [policy] = read(fixture("p-retry", "defaults.json"));
    expect(policy!.settings).toEqual({
      "max-attempts": "11",
      strategy: "grpc",
      jitter: "0",
      "min-delay": "1s",
      "max-delay": "596h31m23.647s",
      "backoff-factor": "2",
    });
    expect(policy!.fields.map((field) => field.value)).toEqual([
      "default (10)",
      "default (false)",
      "default (1000)",
      "default (Infinity)",
      "default (2)",
    ]);
    expect(policy!.fields.find((field) => field.field === "maxTimeout")!.approximation).toContain("TimeoutOverflowWarning");
  });

  it("reads a map of named options as one policy each", () => {
    const policies = read(fixture("p-retry", "named.json"));
    expect(policies.map((policy) => policy.name)).toEqual(['options "github"', 'options "database"']);
    expect(policies[1]!.settings).toMatchObject({ "max-attempts": "9", "min-delay": "100ms", "max-delay": "2s", "backoff-factor": "1.5" });
    expect(policies[1]!.fields[0]!.field).toBe("database.retries");
  });

  it("reads a minTimeout at or above maxTimeout as the cap every wait is, and a factor of 0 as 1, as p-retry does", () => {
    expect(read('{ "minTimeout": 5000, "maxTimeout": 1000 }')[0]!.settings).toMatchObject({
      strategy: "fixed",
      "simple-backoff-delay": "1s",
    });
    expect(read('{ "factor": 0 }')[0]!.settings).toMatchObject({ "backoff-factor": "1" });
  });

  it("refuses a bad file with one line naming the field", () => {
    expect(configError(() => read('{ "retries": "five" }'))).toBe('retries: "five" is not a number, a whole number of retries, 0 or more');
    expect(configError(() => read('{ "retries": -1 }'))).toBe("retries: -1 is below 0, a whole number of retries, 0 or more");
    expect(configError(() => read('{ "retries": 2.5 }'))).toContain("is not a whole number");
    expect(configError(() => read('{ "minTimeout": -5 }'))).toBe("minTimeout: -5 is below 0, milliseconds, 0 or more");
    expect(configError(() => read('{ "randomize": "yes" }'))).toBe('randomize: "yes" is not a boolean, true or false');
    expect(configError(() => read('{ "factor": 0.5 }'))).toContain("factor: 0.5 makes each wait shorter");
    expect(configError(() => read('{ "forever": true }'))).toContain("no longer supported");
    expect(configError(() => read('{ "retries": 3,, }'))).toMatch(/^line 1, column 16: PropertyNameExpected/);
    expect(configError(() => read("retries: 3"))).toMatch(/^line 1, column 1: InvalidSymbol/);
    expect(configError(() => read('{ "methodConfig": [] }'))).toMatch(/^not p-retry options/);
  });

  it("recognizes p-retry options and nothing else", () => {
    expect(pRetryFormat.recognizes(fixture("p-retry", "api-client.json"))).toBe(true);
    expect(pRetryFormat.recognizes(fixture("p-retry", "named.json"))).toBe(true);
    expect(pRetryFormat.recognizes('{ "methodConfig": [{ "retryPolicy": {} }] }')).toBe(false);
    expect(pRetryFormat.recognizes("retries: 3")).toBe(false);
  });
});

describe("p-retry options: writing", () => {
  it("round-trips every fixture: a no-op write is the same bytes, every knob moved reads back", () => {
    for (const name of ["api-client.json", "named.json", "defaults.json"]) {
      const { moved, inexpressible } = expectRoundTrips(pRetryFormat, fixture("p-retry", name));
      // Its four knobs, for each policy.
      expect(moved.length, name).toBe(name === "named.json" ? 8 : 4);
      expect(inexpressible, name).toEqual([]);
    }
  });

  it("changes only the lines that must change, keeping comments", () => {
    const text = fixture("p-retry", "api-client.json");
    const [policy] = read(text);
    const written = writtenText(pRetryFormat.write(text, 0, { ...policy!.settings, "max-attempts": "4", "min-delay": "600ms" }), "write");
    expect(changedLines(text, written)).toEqual(['  "retries": 3,', '  "minTimeout": 400,']);
    expect(written).toContain("// Give up after 20 s");
  });

  it("adds a field the file omits, in its indentation, and leaves out a default that already says the target", () => {
    const text = fixture("p-retry", "named.json");
    // github's waits are 500 ms, 1 s, 2 s: a cap of 1 s changes the last, one of 10 s none.
    expect(writtenText(pRetryFormat.write(text, 0, { ...read(text)[0]!.settings, "max-delay": "10s" }), "write")).toBe(text);
    const written = writtenText(pRetryFormat.write(text, 0, { ...read(text)[0]!.settings, "max-delay": "1s" }), "write");
    expect(changedLines(text, written)).toEqual(['\t\t"minTimeout": 500,', '\t\t"maxTimeout": 1000']);
    expect(read(written)[1]).toEqual(read(text)[1]);
  });

  it("writes a fixed wait as factor 1, and says what it cannot", () => {
    const text = fixture("p-retry", "named.json");
    const fixed = writtenText(
      pRetryFormat.write(text, 1, { strategy: "fixed", "simple-backoff-delay": "250ms", "max-attempts": "9" }),
      "fixed",
    );
    expect(read(fixed)[1]!.settings).toMatchObject({ "backoff-factor": "1", "min-delay": "250ms" });
    const base = read(text)[0]!.settings;
    const cases: [Record<string, string>, string][] = [
      [{ strategy: "full-jitter", "min-delay": "100ms", "max-delay": "1s", "max-attempts": "4" }, "no full-jitter backoff"],
      [{ ...base, jitter: "0.2" }, "±0.2 spread"],
      [{ ...base, "max-attempts": "0" }, "retries: Infinity"],
      [{ ...base, breaker: "consecutive" }, "no circuit breaker"],
      [{ ...base, budget: "grpc" }, "no retry budget"],
      [{ ...base, "min-delay": "10s", "max-delay": "1s" }, "not a policy our simulator runs: invalid settings for -strategy grpc"],
    ];
    for (const [target, why] of cases) {
      const written = pRetryFormat.write(text, 0, target);
      expect(written.kind === "inexpressible" ? written.why : "written", JSON.stringify(target)).toContain(why);
    }
  });
});

/** Near 1 but below it, as Math.random() is. */
const TOP = 1 - 2 ** -20;
/** p-retry rounds each wait to whole milliseconds. */
const ROUNDING_MS = 1;

describe("p-retry options: the mapping against p-retry 7.1.1 itself", () => {
  afterEach(() => vi.restoreAllMocks());

  /** The waits p-retry asks for with these options and every Math.random() at u, against our policy's at the same quantile. */
  async function compare(text: string, u: number) {
    const options = parse(text) as Options;
    const observed = await observeRetries(u, (operation) => pRetry(operation, options));
    const [policy] = read(text);
    const expected = policyWaits(winnerIntent(policy!.settings), Number(policy!.settings["max-attempts"]) - 1, u);
    return { observed, expected };
  }

  it("waits exactly as our grpc strategy with jitter 0 when not randomized, cap included", async () => {
    const database = JSON.stringify((parse(fixture("p-retry", "named.json")) as Record<string, unknown>).database);
    for (const text of [database, '{ "retries": 4, "minTimeout": 50 }', '{ "retries": 6, "minTimeout": 100, "maxTimeout": 500 }']) {
      const { observed, expected } = await compare(text, 0.5);
      // database: 100, 150, 225, 337.5 → 338 (p-retry rounds), 506, 759, 1139, 1709, below its 2 s cap;
      // the others 50, 100, 200, 400 and 100, 200, 400, then the 500 ms cap.
      expect(observed.attempts).toBe(expected.length + 1);
      observed.waitsMs.forEach((wait, index) => expect(Math.abs(wait - expected[index]!)).toBeLessThanOrEqual(ROUNDING_MS));
    }
  });

  it("draws as p-retry does with randomize below the cap, and matches its capped wait at the middle draw", async () => {
    const text = '{ "retries": 6, "minTimeout": 100, "maxTimeout": 400, "randomize": true }';
    for (const u of [0, 0.3, 0.5, TOP]) {
      const { observed, expected } = await compare(text, u);
      expect(observed.attempts).toBe(7);
      // Retries 1 and 2 (100 and 200 ms before the draw) stay below the cap at every draw: p-retry waits (1 + u) x 100, 200.
      for (const index of [0, 1]) expect(Math.abs(observed.waitsMs[index]! - expected[index]!), `u=${u}`).toBeLessThanOrEqual(ROUNDING_MS);
      // From retry 3 p-retry waits the cap, 400 ms, at any draw; our spread about it is 400 at the middle draw.
      for (const wait of observed.waitsMs.slice(2)) expect(wait).toBe(400);
      if (u === 0.5) expected.slice(2).forEach((wait) => expect(wait).toBeCloseTo(400, 6));
    }
    const fixtureRun = await compare(fixture("p-retry", "api-client.json"), 0.3);
    // 200 x 1.3 = 260, 520, 1040, 2080: all below the 5 s cap.
    expect(fixtureRun.observed.waitsMs.slice(0, 4)).toEqual([260, 520, 1040, 2080]);
    fixtureRun.expected.slice(0, 4).forEach((wait, index) => expect(wait).toBeCloseTo(fixtureRun.observed.waitsMs[index]!, 6));
  });
});

// p-retry's README, https://github.com/sindresorhus/p-retry#readme (its usage example, as in
// node_modules/p-retry/readme.md, 7.1.1): pRetry(run, {retries: 5}), the options written as JSON.
describe("the example from p-retry's documentation", () => {
  it("reads {retries: 5} field by field, every other option at p-retry's default", () => {
    const [only, ...others] = read(fixture("p-retry", "docs-readme.json"));
    expect(others).toEqual([]);
    const longestTimer = "596h31m23.647s";
    expect(only!.settings).toEqual({
      "max-attempts": "6",
      strategy: "grpc",
      jitter: "0",
      "min-delay": "1s",
      "max-delay": longestTimer,
      "backoff-factor": "2",
    });
    expect(fieldsOf(only!)).toEqual({
      retries: ["5", { "max-attempts": "6" }],
      randomize: ["default (false)", { strategy: "grpc", jitter: "0" }],
      minTimeout: ["default (1000)", { "min-delay": "1s" }],
      maxTimeout: ["default (Infinity)", { "max-delay": longestTimer }],
      factor: ["default (2)", { "backoff-factor": "2" }],
    });
    expect(unmodeledOf(only!)).toEqual({});
    expectSimulatorTakes(only!.settings);
  });

  it("waits as p-retry 7.1.1 itself does with those options: 1, 2, 4, 8 and 16 s, as our reading does", async () => {
    const text = fixture("p-retry", "docs-readme.json");
    const observed = await observeRetries(0.5, (operation) => pRetry(operation, parse(text) as Options));
    const [policy] = read(text);
    expect(observed.waitsMs).toEqual([1000, 2000, 4000, 8000, 16_000]);
    expect(observed.attempts).toBe(Number(policy!.settings["max-attempts"]));
    expect(policyWaits(winnerIntent(policy!.settings), 5, 0.5)).toEqual(observed.waitsMs);
  });
});
