import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDuration } from "../../../../src/cli/duration.ts";
import { parseValue } from "../../../../src/cli/flags.ts";
import { UsageError } from "../../../../src/cli/usage-error.ts";
import { factorProblem, FaultSyntaxError, MAX_FAULTS, parseFaults } from "../../../../src/model/faults/fault-schedule.ts";
import { SIM_FLAGS } from "../../../../src/options/sim.ts";
import { FUZZ, oneLinePrintable } from "../../../helpers/fuzz.ts";

/*
 * The fault grammar under hostile input (issue 39): schedules built from the grammar's own
 * tokens, extreme numbers and garbage. Each is read or refused with the grammar's error, one
 * line; through the -faults flag, a usage error of one printable line. FUZZ_RUNS and FUZZ_SEED
 * (test/helpers/fuzz.ts) scale it up and replay it.
 */

const KINDS = ["stop", "crash", "capacity", "slow", "errors", "spike"];
const DURATIONS = [
  "15s",
  "1m30s",
  "0",
  "0s",
  "-1s",
  ".5s",
  "1.5.5s",
  "1µs",
  "99999999999999999999h",
  "1e308h",
  "9007199254740993ns",
  "s",
  "1",
];
const FACTORS = ["2", "0.5", "1", "0", "-1", "1e308", "1e-400", "NaN", "Infinity", "-Infinity", "0x10", "1_000", "", " 2"];
const TOKENS = [
  ...KINDS,
  ...["boom", "STOP", "db:", "api-1:", "Db:", ":", "a:b:", "9x:"],
  ...["@", "+", "*", ",", ", ", " ", "\t", "\n", "\u0000", "\u001b", "\u202e", "\u2028"],
  ...DURATIONS,
  ...FACTORS,
];

/** Text from the grammar's tokens, with a little garbage between them. */
const schedule = fc
  .array(
    fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...TOKENS) }, { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) }),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(""));

/** Well-formed faults with hostile numbers: kind@start+length*factor, with any duration and factor in their places. */
const shaped = fc
  .tuple(
    fc.constantFrom("", "db:", "x:"),
    fc.constantFrom(...KINDS),
    fc.constantFrom(...DURATIONS),
    fc.constantFrom(...DURATIONS),
    fc.option(fc.oneof(fc.constantFrom(...FACTORS), fc.double().map(String)), { nil: undefined }),
  )
  .map(([tier, kind, start, length, factor]) => `${tier}${kind}@${start}+${length}${factor === undefined ? "" : `*${factor}`}`);

const FAULTS_FLAG = SIM_FLAGS.find((flag) => flag.name === "faults")!;

describe("the fault grammar, fuzzed", () => {
  it("reads a schedule into faults it can run, or refuses it with one line", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          schedule,
          fc.array(shaped, { minLength: 1, maxLength: 5 }).map((faults) => faults.join(",")),
        ),
        (text) => {
          let faults;
          try {
            faults = parseFaults(text, parseDuration);
          } catch (error) {
            expect(error).toBeInstanceOf(FaultSyntaxError);
            expect((error as Error).message).not.toMatch(/[\n\r\u2028\u2029]/);
            return;
          }
          expect(faults.length).toBeGreaterThan(0);
          expect(faults.length).toBeLessThanOrEqual(MAX_FAULTS);
          for (const fault of faults) {
            expect(Number.isFinite(fault.atMs) && fault.atMs >= 0).toBe(true);
            expect(Number.isFinite(fault.durationMs) && fault.durationMs > 0).toBe(true);
            if (fault.kind !== "stop" && fault.kind !== "crash") expect(factorProblem(fault.kind, fault.factor)).toBeUndefined();
          }
        },
      ),
      FUZZ,
    );
  });

  it("through -faults, takes the schedule or says why in one printable line", () => {
    fc.assert(
      fc.property(schedule, (text) => {
        try {
          expect(parseValue(FAULTS_FLAG, text)).toBe(text);
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
          oneLinePrintable((error as Error).message);
        }
      }),
      FUZZ,
    );
  });
});
