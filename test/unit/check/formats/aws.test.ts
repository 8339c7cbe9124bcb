import * as smithyRetry from "@smithy/util-retry";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { awsFormat } from "../../../../src/check/formats/aws.ts";
import { ConfigFileError, type PolicyReading } from "../../../../src/check/format.ts";
import { type FlagSettings, simValuesFor } from "../../../../src/recommend/settings.ts";
import { expectSimulatorTakes, fieldsOf, unmodeledOf } from "../../../helpers/config-formats.ts";
import { observeRetries, policyWaits, winnerIntent } from "../../../helpers/snippets.ts";

const FIXTURES = resolve(import.meta.dirname, "../../../fixtures/configs/aws");
const CONFIG = readFileSync(resolve(FIXTURES, "config"), "utf8");

/** What standard mode reads as: the aws-standard preset's flags (presets.ts). */
const STANDARD = {
  strategy: "full-jitter",
  "min-delay": "50ms",
  "max-delay": "20s",
  budget: "aws",
  "budget-retry-cost": "14",
  "budget-timeout-cost": "14",
};
const LEGACY = { strategy: "full-jitter", "min-delay": "1s", "max-delay": "1h" };

const policies = () => awsFormat.read(CONFIG).policies;
const policy = (name: string): PolicyReading => policies().find((reading) => reading.name === name)!;
const fieldOf = (reading: PolicyReading, key: string) => reading.fields.find((field) => field.field.endsWith(` ${key}`))!;

function writtenText(text: string, index: number, target: FlagSettings): string {
  const written = awsFormat.write(text, index, target);
  if (written.kind !== "written") throw new Error(`inexpressible: ${written.why}`);
  return written.text;
}

function readError(text: string): string {
  try {
    awsFormat.read(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    expect((error as Error).message).not.toContain("\n");
    return (error as Error).message;
  }
  throw new Error("read accepted the file");
}

describe("aws: reading ~/.aws/config", () => {
  it("reads each [default] and [profile NAME] section as a policy, and no other section", () => {
    expect(policies().map((reading) => reading.name)).toEqual([
      "[default]",
      "[profile payments]",
      "[profile ingest]",
      "[profile legacy-scripts]",
    ]);
    expect(awsFormat.recognizes(CONFIG)).toBe(true);
    expect(awsFormat.recognizes('{"methodConfig": []}')).toBe(false);
  });

  it("reads standard mode as the aws-standard preset, with max_attempts as written", () => {
    const payments = policy("[profile payments]");
    expect(payments.settings).toEqual({ ...STANDARD, "max-attempts": "5" });
    expect(fieldOf(payments, "retry_mode")).toMatchObject({
      field: "[profile payments] retry_mode",
      value: "standard",
      settings: STANDARD,
    });
    expect(fieldOf(payments, "retry_mode").approximation).toContain("November 10, 2026");
    expect(fieldOf(payments, "max_attempts")).toMatchObject({ value: "5", settings: { "max-attempts": "5" } });
    for (const field of payments.fields) expect(field.source).toMatch(/"Retry behavior", https:\/\/docs\.aws\.amazon\.com\//);
    expect(payments.unmodeled).toEqual([]);
  });

  it("applies and records the defaults: standard mode, 3 attempts", () => {
    const reading = policy("[default]");
    expect(reading.settings).toEqual({ ...STANDARD, "max-attempts": "3" });
    expect(reading.fields.map((field) => field.value)).toEqual(["default (standard)", "default (3)"]);
  });

  it("reads adaptive as standard, naming the rate limiter it does not model, and defaults_mode", () => {
    const ingest = policy("[profile ingest]");
    expect(ingest.settings).toEqual({ ...STANDARD, "max-attempts": "10" });
    expect(ingest.unmodeled.map((field) => [field.field, field.value])).toEqual([
      ["[profile ingest] retry_mode", "adaptive"],
      ["[profile ingest] defaults_mode", "in-region"],
    ]);
    expect(ingest.unmodeled[0]!.why).toContain("rate limiter");
  });

  it("reads legacy as botocore's: full jitter on 1 s, no quota, 5 attempts by default; and names the metadata service's settings", () => {
    const legacy = policy("[profile legacy-scripts]");
    expect(legacy.settings).toEqual({ ...LEGACY, "max-attempts": "5" });
    expect(fieldOf(legacy, "retry_mode").source).toContain("boto3.amazonaws.com");
    expect(fieldOf(legacy, "retry_mode").approximation).toContain("differs per SDK");
    expect(legacy.unmodeled.map((field) => field.field)).toEqual([
      "[profile legacy-scripts] metadata_service_timeout",
      "[profile legacy-scripts] metadata_service_num_attempts",
    ]);
  });

  it("gives settings the simulator takes, for every profile", () => {
    for (const reading of policies()) expect(() => winnerIntent(reading.settings), reading.name).not.toThrow();
  });

  it.each([
    ["[default]\nretry_mode = fast\n", '[default] retry_mode: "fast" is not a retry mode, one of legacy, standard, adaptive'],
    ["[profile a]\nmax_attempts = three\n", '[profile a] max_attempts: "three" is not a number of attempts, a whole number of 1 or more'],
    ["[profile a]\nmax_attempts = -1\n", '[profile a] max_attempts: "-1" is not a number of attempts, a whole number of 1 or more'],
    ["[profile a]\nmax_attempts = 0\n", '[profile a] max_attempts: "0" is not a number of attempts, a whole number of 1 or more'],
    ["[profile a]\nmax_attempts = 2.5\n", '[profile a] max_attempts: "2.5" is not a number of attempts, a whole number of 1 or more'],
    ['{ "retry_mode": "standard" }\n', 'line 1: "{ "retry_mode": "standard" }" is not a setting (key = value) or a [section]'],
    ["[sso-session corp]\nsso_region = us-east-1\n", "not an AWS shared config file: it has no [default] or [profile NAME] section"],
    // botocore refuses a profile given twice, the JavaScript SDK merges it: neither is guessed.
    ["[default]\nmax_attempts = 3\n[default]\nmax_attempts = 5\n", "line 3: [default] again (first at line 1): give each profile once"],
    ["[profile a]\nmax_attempts = 3\nmax_attempts = 5\n", "line 3: max_attempts again in [profile a] (first at line 2)"],
  ])("refuses a wrong file in one line: %j", (text, message) => {
    expect(readError(text)).toBe(message);
  });
});

describe("aws: writing a policy back", () => {
  it("gives the same text, byte for byte, for each policy's own settings", () => {
    policies().forEach((reading, index) => expect(writtenText(CONFIG, index, reading.settings)).toBe(CONFIG));
  });

  it("changes only max_attempts, in place, keeping its inline comment and the rest of the file", () => {
    const text = writtenText(CONFIG, 1, { ...policy("[profile payments]").settings, "max-attempts": "2" });
    expect(text).toBe(CONFIG.replace("max_attempts = 5", "max_attempts = 2"));
    expect(awsFormat.read(text).policies[1]!.settings["max-attempts"]).toBe("2");
  });

  it("adds max_attempts under the right section when the default does not say the target, in the section's own style", () => {
    const text = writtenText(CONFIG, 0, { ...STANDARD, "max-attempts": "4" });
    expect(text).toBe(CONFIG.replace("output = json\n", "output = json\nmax_attempts = 4\n"));
    const ingest = writtenText(CONFIG, 2, { ...STANDARD, "max-attempts": "3" });
    expect(ingest).toBe(CONFIG.replace("max_attempts=10", "max_attempts=3"));
    expect(awsFormat.read(ingest).policies[2]!.settings).toEqual({ ...STANDARD, "max-attempts": "3" });
  });

  it("round-trips every knob: the written file reads as the target", () => {
    policies().forEach((reading, index) => {
      for (const attempts of ["1", "2", "7"]) {
        const target = { ...reading.settings, "max-attempts": attempts };
        expect(awsFormat.read(writtenText(CONFIG, index, target)).policies[index]!.settings, `${reading.name} ${attempts}`).toEqual(target);
      }
    });
    expect(awsFormat.knobs).toEqual(["max-attempts"]);
  });

  it("switches between legacy and standard by retry_mode, adding or dropping nothing else that the mode's default says", () => {
    const toStandard = writtenText(CONFIG, 3, { ...STANDARD, "max-attempts": "3" });
    expect(toStandard).toBe(CONFIG.replace("retry_mode = legacy", "retry_mode = standard"));
    const toLegacy = writtenText(CONFIG, 0, { ...LEGACY, "max-attempts": "5" });
    expect(toLegacy).toBe(CONFIG.replace("output = json\n", "output = json\nretry_mode = legacy\n"));
    expect(awsFormat.read(toLegacy).policies[0]!.settings).toEqual({ ...LEGACY, "max-attempts": "5" });
    // Adaptive is standard to the simulation, so a standard target leaves it as it is.
    expect(writtenText(CONFIG, 2, { ...STANDARD, "max-attempts": "10" })).toBe(CONFIG);
  });

  it("keeps Windows line ends", () => {
    const text = "[default]\r\nregion = eu-west-1\r\n";
    expect(writtenText(text, 0, { ...STANDARD, "max-attempts": "2" })).toBe("[default]\r\nregion = eu-west-1\r\nmax_attempts = 2\r\n");
  });

  it.each([
    [{ ...STANDARD, "max-attempts": "0" }, "no limit"],
    [{ ...STANDARD }, "no limit"],
    [{ ...STANDARD, "max-attempts": "3", "min-delay": "100ms" }, "neither"],
    [{ ...STANDARD, "max-attempts": "3", "budget-retry-cost": "5" }, "neither"],
    [{ ...STANDARD, "max-attempts": "3", breaker: "consecutive" }, "neither"],
    [{ ...STANDARD, "max-attempts": "3", timeout: "500ms" }, "neither"],
    [{ strategy: "exponential", "max-attempts": "3" }, "neither"],
  ])("says what it cannot express: %j", (target, why) => {
    const written = awsFormat.write(CONFIG, 1, target);
    expect(written.kind).toBe("inexpressible");
    if (written.kind === "inexpressible") expect(written.why).toContain(why);
  });
});

describe("aws: standard mode against the real SDK (@smithy/util-retry)", () => {
  /** The SDK floors a wait to whole milliseconds, and a timer of 0 ms fires after 1 ms. */
  const ROUNDING_MS = 1;

  /** The SDK's retry loop in brief: attempt, and on a transient error ask the strategy for a retry token (it waits, or refuses). */
  async function standardRetries(strategy: smithyRetry.StandardRetryStrategy, operation: () => Promise<never>): Promise<never> {
    let token = await strategy.acquireInitialRetryToken("check-test");
    for (;;) {
      try {
        return await operation();
      } catch {
        token = await strategy.refreshRetryTokenForRetry(token, { errorType: "TRANSIENT" });
      }
    }
  }

  it("waits what our reading's full jitter waits, at each quantile, for the attempts max_attempts says", async () => {
    const reading = policy("[profile ingest]"); // max_attempts 10
    const attempts = Number(reading.settings["max-attempts"]);
    const intent = winnerIntent(reading.settings);
    for (const u of [0, 0.3, 1 - 2 ** -20]) {
      const observed = await observeRetries(u, (operation) => standardRetries(new smithyRetry.StandardRetryStrategy(attempts), operation));
      expect(observed.attempts).toBe(attempts);
      const expected = policyWaits(intent, attempts - 1, u);
      observed.waitsMs.forEach((wait, index) =>
        expect(Math.abs(wait - expected[index]!), `u=${u} retry ${index + 1}`).toBeLessThanOrEqual(ROUNDING_MS),
      );
    }
  });

  it("caps its waits at 20 s as our max-delay does", async () => {
    const settings = { ...STANDARD, "max-attempts": "13" };
    const observed = await observeRetries(1 - 2 ** -20, (operation) =>
      standardRetries(new smithyRetry.StandardRetryStrategy(13), operation),
    );
    const expected = policyWaits(winnerIntent(settings), 12, 1 - 2 ** -20);
    expect(Math.max(...observed.waitsMs)).toBe(19_999);
    observed.waitsMs.forEach((wait, index) => expect(Math.abs(wait - expected[index]!)).toBeLessThanOrEqual(ROUNDING_MS));
  });

  it("takes 14 tokens a retry from a 500-token quota, as -budget aws with our reading's costs: the installed SDK is the November 2026 one", async () => {
    const strategy = new smithyRetry.StandardRetryStrategy(3);
    await observeRetries(0, (operation) => standardRetries(strategy, operation));
    const quota = simValuesFor({}, STANDARD)["budget-quota"];
    expect(quota).toBe(500);
    expect(strategy.getCapacity()).toBe(quota - 2 * Number(STANDARD["budget-retry-cost"]));
    // Its exported constants still carry the old figures (100 ms, 5 tokens), which its strategy no longer uses.
    expect([smithyRetry.DEFAULT_RETRY_DELAY_BASE, smithyRetry.RETRY_COST, smithyRetry.INITIAL_RETRY_TOKENS]).toEqual([100, 5, 500]);
    expect(smithyRetry.DEFAULT_MAX_ATTEMPTS).toBe(Number(policy("[default]").settings["max-attempts"]));
    expect(smithyRetry.DEFAULT_RETRY_MODE).toBe("standard");
  });
});

// AWS CLI User Guide, "AWS CLI retries", https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-retries.html
// ("Defining a retry configuration in your AWS configuration file"), copied as published.
describe("the example from the AWS CLI's documentation", () => {
  const example = readFileSync(resolve(FIXTURES, "docs-cli-retries"), "utf8");

  it("reads [default]'s standard mode and max_attempts field by field", () => {
    const [only, ...others] = awsFormat.read(example).policies;
    expect(others).toEqual([]);
    expect(only!.name).toBe("[default]");
    expect(only!.settings).toEqual({ ...STANDARD, "max-attempts": "6" });
    expect(fieldsOf(only!)).toEqual({
      "[default] retry_mode": ["standard", STANDARD],
      "[default] max_attempts": ["6", { "max-attempts": "6" }],
    });
    expect(unmodeledOf(only!)).toEqual({});
    expectSimulatorTakes(only!.settings);
  });

  // Boto3's guide, "Retries", https://docs.aws.amazon.com/boto3/latest/guide/retries.html, gives
  // "[myConfigProfile]": in the config file a section other than [default] is a profile only as
  // [profile NAME] (botocore's build_profile_map), so the SDKs read no retry settings from it.
  it("refuses boto3's example, whose [myConfigProfile] section is no profile of a config file, in one line", () => {
    const boto3 = "[myConfigProfile]\nregion = us-east-1\nmax_attempts = 10\nretry_mode = standard\n";
    expect(() => awsFormat.read(boto3)).toThrow(ConfigFileError);
    expect(() => awsFormat.read(boto3)).toThrow(/no \[default\] or \[profile NAME\] section/);
  });
});
