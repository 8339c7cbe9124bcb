// Go's own tables name int64 nanosecond counts that a double cannot hold exactly; the literals stay as Go wrote them.
/* eslint-disable no-loss-of-precision */
import { describe, it, expect } from "vitest";
import { DurationSyntaxError, formatDuration, parseDuration } from "../../../src/cli/duration.ts";

// Expected values are millisecond literals: a JS literal is the double nearest the exact
// decimal, which is exactly what parseDuration promises.

// Go's parseDurationTests (src/time/time_test.go), successful cases, converted to ms.
const goParseTests: ReadonlyArray<readonly [string, number]> = [
  // simple
  ["0", 0],
  ["5s", 5000],
  ["30s", 30000],
  ["1478s", 1478000],
  // sign
  ["-5s", -5000],
  ["+5s", 5000],
  ["-0", 0],
  ["+0", 0],
  // decimal
  ["5.0s", 5000],
  ["5.6s", 5600],
  ["5.s", 5000],
  [".5s", 500],
  ["1.0s", 1000],
  ["1.00s", 1000],
  ["1.004s", 1004],
  ["1.0040s", 1004],
  ["100.00100s", 100001],
  // different units
  ["10ns", 0.00001],
  ["11us", 0.011],
  ["12\u00b5s", 0.012],
  ["12\u03bcs", 0.012],
  ["13ms", 13],
  ["14s", 14000],
  ["15m", 900000],
  ["16h", 57600000],
  // composite durations
  ["3h30m", 12600000],
  ["10.5s4m", 250500],
  ["-2m3.4s", -123400],
  ["1h2m3s4ms5us6ns", 3723004.005006],
  ["39h9m14.425s", 140954425],
  // large value
  ["52763797000ns", 52763.797],
  // more than 9 digits after the decimal point (golang.org/issue/6617)
  ["0.3333333333333333333h", 1200000],
  // 1<<53+1 ns cannot be held by a float64 nanosecond count
  ["9007199254740993ns", 9007199254.740993],
  // largest int64 nanosecond count
  ["9223372036854775807ns", 9223372036854.775807],
  ["9223372036854775.807us", 9223372036854.775807],
  ["9223372036s854ms775us807ns", 9223372036854.775807],
  ["-9223372036854775807ns", -9223372036854.775807],
  // huge string (issue 15011)
  ["0.100000000000000000000h", 360000],
  // Go gets 2988372.539827 (49m48.372539827s) because it truncates a float64 product;
  // the exact value is ...827.719 ns, which we round to the nearest nanosecond.
  ["0.830103483285477580700h", 2988372.539828],
];

// Go's parseDurationTests error cases that are not int64 overflows.
const goParseErrors = ["", "3", "-", "s", ".", "-.", ".s", "+.s"];

// Go rejects these as int64 overflows; here they are ordinary values.
const beyondInt64: ReadonlyArray<readonly [string, number]> = [
  ["3000000h", 10800000000000],
  ["9223372036854775808ns", 9223372036854.775808],
  ["9223372036854775.808us", 9223372036854.775808],
  ["9223372036854ms775us808ns", 9223372036854.775808],
  ["-9223372036854775808ns", -9223372036854.775808],
  ["100000000h", 360000000000000],
  ["1000000000h0m0s", 3.6e15],
  [`1${"0".repeat(30)}ms`, 1e30],
  ["-" + "9".repeat(300) + "h", -3.6e306],
];

const moreParseTests: ReadonlyArray<readonly [string, number]> = [
  ["300ms", 300],
  ["-1.5h", -5400000],
  ["2h45m", 9900000],
  ["1h2m3s", 3723000],
  ["1.s", 1000],
  ["500us", 0.5],
  ["1ns", 0.000001],
  ["2.671444385s", 2671.444385],
  ["2m8.580906589s", 128580.906589],
  ["1h1h", 7200000], // Go allows repeated units and sums them
  ["0s", 0],
  ["-0s", 0],
  ["00s", 0],
  ["0.4ns", 0], // sub-nanosecond parts round to whole nanoseconds
  ["-0.4ns", 0],
  ["0.5ns", 0.000001], // halves round away from zero
  ["-1.5ns", -0.000002],
  ["1.0000000004s", 1000],
  ["1.0000000005s", 1000.000001],
];

describe("parseDuration: Go's parseDurationTests", () => {
  it.each(goParseTests)("%j -> %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
  it.each(goParseErrors)("%j is rejected", (text) => {
    expect(() => parseDuration(text)).toThrow(DurationSyntaxError);
  });
});

describe("parseDuration: beyond Go's int64 range", () => {
  it.each(beyondInt64)("%j -> %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
});

describe("parseDuration: more cases", () => {
  it.each(moreParseTests)("%j -> %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
  it("never returns negative zero", () => {
    for (const text of ["-0", "-0s", "-0.0h", "-0.1ns"]) {
      expect(Object.is(parseDuration(text), 0)).toBe(true);
    }
  });
});

// Messages as Go's, including its quoting: \xNN per UTF-8 byte for control and non-ASCII.
const errorMessages: ReadonlyArray<readonly [string, string]> = [
  ["", 'time: invalid duration ""'],
  ["1", 'time: missing unit in duration "1"'],
  ["-1", 'time: missing unit in duration "-1"'],
  ["00", 'time: missing unit in duration "00"'],
  ["1x", 'time: unknown unit "x" in duration "1x"'],
  ["1s2", 'time: missing unit in duration "1s2"'],
  ["s", 'time: invalid duration "s"'],
  [".s", 'time: invalid duration ".s"'],
  ["1.5.2s", 'time: missing unit in duration "1.5.2s"'],
  ["--1s", 'time: invalid duration "--1s"'],
  ["+-1s", 'time: invalid duration "+-1s"'],
  [" 1s", 'time: invalid duration " 1s"'],
  ["1s ", 'time: unknown unit "s " in duration "1s "'],
  ["1 s", 'time: unknown unit " s" in duration "1 s"'],
  ["1h-5m", 'time: unknown unit "h-" in duration "1h-5m"'],
  ["1e3s", 'time: unknown unit "e" in duration "1e3s"'],
  ["1S", 'time: unknown unit "S" in duration "1S"'],
  ["1d", 'time: unknown unit "d" in duration "1d"'],
  ["Infinity", 'time: invalid duration "Infinity"'],
  ["NaN", 'time: invalid duration "NaN"'],
  ["1\ts", 'time: unknown unit "\\x09s" in duration "1\\x09s"'],
  ['1"s', 'time: unknown unit "\\"s" in duration "1\\"s"'],
  ["1\\s", 'time: unknown unit "\\\\s" in duration "1\\\\s"'],
  ["1\u00b5x", 'time: unknown unit "\\xc2\\xb5x" in duration "1\\xc2\\xb5x"'],
  ["\u221e", 'time: invalid duration "\\xe2\\x88\\x9e"'],
  ["1\u{1f600}", 'time: unknown unit "\\xf0\\x9f\\x98\\x80" in duration "1\\xf0\\x9f\\x98\\x80"'],
  ["1\ud800", 'time: unknown unit "\\xef\\xbf\\xbd" in duration "1\\xef\\xbf\\xbd"'],
];

describe("parseDuration: errors", () => {
  it.each(errorMessages)("%j -> %s", (text, message) => {
    let caught: unknown;
    try {
      parseDuration(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DurationSyntaxError);
    expect(caught).toBeInstanceOf(Error);
    expect((caught as DurationSyntaxError).name).toBe("DurationSyntaxError");
    expect((caught as DurationSyntaxError).message).toBe(message);
  });
  it("rejects a value too large for a finite double", () => {
    const text = `1${"0".repeat(400)}h`;
    expect(() => parseDuration(text)).toThrow(DurationSyntaxError);
    expect(() => parseDuration(text)).toThrow(/^time: invalid duration "1000/);
  });
});

// Go's durationTests (Duration.String()), converted to ms. Go also checks -d for d > 0.
const goStringTests: ReadonlyArray<readonly [string, number]> = [
  ["0s", 0],
  ["1ns", 0.000001],
  ["1.1\u00b5s", 0.0011],
  ["2.2ms", 2.2],
  ["3.3s", 3300],
  ["4m5s", 245000],
  ["4m5.001s", 245001],
  ["5h6m7.001s", 18367001],
  ["8m0.000000001s", 480000.000001],
];

const moreStringTests: ReadonlyArray<readonly [string, number]> = [
  ["123ns", 0.000123],
  ["1.5\u00b5s", 0.0015],
  ["999ns", 0.000999],
  ["1\u00b5s", 0.001],
  ["999.999\u00b5s", 0.999999],
  ["1ms", 1],
  ["100ms", 100],
  ["1.234567ms", 1.234567],
  ["999.999999ms", 999.999999],
  ["1s", 1000],
  ["59.999999999s", 59999.999999],
  ["1m0s", 60000],
  ["1h0m0s", 3600000],
  ["2.671444385s", 2671.444385],
  ["2m8.580906589s", 128580.906589],
  ["72h3m0.5s", 259380500],
  ["-1ns", -0.000001],
  ["-1h30m0s", -5400000],
  // Rounded to whole nanoseconds; Go has no negative zero.
  ["0s", -0],
  ["0s", 0.0000004],
  ["0s", -0.0000004],
  ["1ns", 0.0000006],
  ["-1ns", -0.0000006],
  ["0s", Number.MIN_VALUE],
  // The double's exact value decides: 5e-7 is just below half a nanosecond.
  ["0s", 0.0000005],
  // 1/128 ms is exactly 7812.5 ns: halves round away from zero.
  ["7.813\u00b5s", 1 / 128],
  ["-7.813\u00b5s", -1 / 128],
];

// Beyond Go's int64 range; nanosecond digits are those of the double's exact value.
const beyondInt64Strings: ReadonlyArray<readonly [string, number]> = [
  ["1000000000h0m0s", 3.6e6 * 1e9],
  ["-1000000000h0m0s", -3.6e15],
  ["876600h0m0s", 3.15576e12], // 100 Julian years
  ["277777777777777783301284h40m38.656s", 1e30],
  // 1<<53+1 ns: still exact, the double's spacing here is below a nanosecond.
  ["2501h59m59.254740993s", 9007199254.740993],
  // Go's extremes (2562047h47m16.854775807s and -...808s) are not representable as a
  // double of milliseconds (spacing ~1.95µs here); the nearest double prints as:
  ["2562047h47m16.854775391s", 9223372036854.775807],
  ["-2562047h47m16.854775391s", -9223372036854.775808],
];

describe("formatDuration: Go's durationTests", () => {
  it.each(goStringTests)("%s", (text, ms) => {
    expect(formatDuration(ms)).toBe(text);
    if (ms > 0) expect(formatDuration(-ms)).toBe(`-${text}`);
  });
});

describe("formatDuration: more cases", () => {
  it.each(moreStringTests)("%s <- %d ms", (text, ms) => {
    expect(formatDuration(ms)).toBe(text);
  });
  it.each(beyondInt64Strings)("%s <- %d ms (beyond int64)", (text, ms) => {
    expect(formatDuration(ms)).toBe(text);
  });
  it("prints Number.MAX_VALUE as a (long) exact hour count", () => {
    // Expected value computed independently with Python's exact fractions.
    const hours =
      "49935920412842103004035395481028987999464046534956943499699299111988127994452371877941544064" +
      "65746615876123859819843957339842259080262893965790765186209375471834719738237535613229041391" +
      "39970358177988523634597594284179397880286730411571690442589231522985549517233735342135383825" +
      "50255361078125112229495590";
    expect(formatDuration(Number.MAX_VALUE)).toBe(`${hours}h14m18.368s`);
    expect(formatDuration(-Number.MAX_VALUE)).toBe(`-${formatDuration(Number.MAX_VALUE)}`);
  });
  it.each([
    ["+Inf", Infinity],
    ["-Inf", -Infinity],
    ["NaN", NaN],
  ] as const)("%s for non-finite input", (text, ms) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe("round trips", () => {
  const canonical = [
    ...goStringTests.map(([text]) => text),
    ...goStringTests.filter(([, ms]) => ms > 0).map(([text]) => `-${text}`),
    "123ns",
    "1.5\u00b5s",
    "100ms",
    "1.234567ms",
    "2.671444385s",
    "2m8.580906589s",
    "1h0m0s",
    "72h3m0.5s",
    "1000000000h0m0s",
    "876600h0m0s",
    "2501h59m59.254740993s",
  ];
  it.each(canonical)("formatDuration(parseDuration(%j))", (text) => {
    expect(formatDuration(parseDuration(text))).toBe(text);
  });

  // Like Go's TestParseDurationRoundTrip, with a fixed seed and nanosecond resolution:
  // every whole nanosecond count below 2^52 survives ms -> text -> ms unchanged.
  it("whole nanosecond counts below 2^52 round-trip through text", () => {
    let state = 0x2545f491;
    const next = (): number => {
      // xorshift32: deterministic, no dependency on the project's random module.
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return state >>> 0;
    };
    for (let k = 0; k < 2000; k++) {
      const digits = 1 + (next() % 16);
      const ns = ((next() * 2 ** 20 + (next() % 2 ** 20)) % 2 ** 52) % 10 ** digits;
      const ms = (k % 2 === 0 ? ns : -ns) / 1e6;
      const text = formatDuration(ms);
      const back = parseDuration(text);
      expect(back, text).toBe(ms === 0 ? 0 : ms);
      expect(formatDuration(back)).toBe(text);
    }
  });

  it("whole milliseconds round-trip (Go's TestParseDurationRoundTrip)", () => {
    for (let ms = 1; ms < 2 ** 31; ms = ms * 7 + 3) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
  });
});
