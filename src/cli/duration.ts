/**
 * Go-style durations for the CLI: the same text users know from Go's time.ParseDuration and
 * time.Duration.String(), but carried as milliseconds in a JS number (fractions allowed).
 *
 * Arithmetic is exact (BigInt) and each conversion between text and number rounds once, so
 * "2.671444385s" parses to exactly the double 2671.444385 and prints back unchanged. Unlike
 * Go there is no int64 limit: modelled delays of years or 1e30 ms still parse and print.
 */

/** Thrown by parseDuration; messages match Go's time.ParseDuration errors. */
export class DurationSyntaxError extends Error {
  override readonly name = "DurationSyntaxError";
}

const NS_PER_UNIT: ReadonlyMap<string, bigint> = new Map([
  ["ns", 1n],
  ["us", 1_000n],
  ["\u00b5s", 1_000n], // µ micro sign
  ["\u03bcs", 1_000n], // μ Greek small letter mu
  ["ms", 1_000_000n],
  ["s", 1_000_000_000n],
  ["m", 60_000_000_000n],
  ["h", 3_600_000_000_000n],
]);

const DOT = 0x2e;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * Parses Go duration syntax ("300ms", "-1.5h", "2h45m", ".5s", "0") into milliseconds.
 * The exact sum is rounded to whole nanoseconds (halves away from zero), as a Go Duration
 * holds whole nanoseconds, then converted to the nearest double.
 * Throws DurationSyntaxError on bad syntax or a value too large for a finite double.
 */
export function parseDuration(text: string): number {
  const invalid = (): DurationSyntaxError => new DurationSyntaxError(`time: invalid duration ${quote(text)}`);
  const n = text.length;
  let i = 0;
  let negative = false;
  if (text[0] === "-" || text[0] === "+") {
    negative = text[0] === "-";
    i = 1;
  }
  // Special case as in Go: a bare zero needs no unit.
  if (text.slice(i) === "0") return 0;
  if (i === n) throw invalid();

  // Running total in nanoseconds is numerator / 10^fractionDigits, kept exact.
  let numerator = 0n;
  let fractionDigits = 0;
  while (i < n) {
    const first = text.charCodeAt(i);
    if (!(first === DOT || isDigit(first))) throw invalid();
    const intStart = i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    const intPart = text.slice(intStart, i);
    let fracPart = "";
    if (i < n && text.charCodeAt(i) === DOT) {
      i++;
      const fracStart = i;
      while (i < n && isDigit(text.charCodeAt(i))) i++;
      fracPart = text.slice(fracStart, i);
    }
    if (intPart === "" && fracPart === "") throw invalid(); // ".", ".s"

    // As in Go, the unit is everything up to the next number, so "1s " names unit "s ".
    const unitStart = i;
    while (i < n && !(text.charCodeAt(i) === DOT || isDigit(text.charCodeAt(i)))) i++;
    if (i === unitStart) {
      throw new DurationSyntaxError(`time: missing unit in duration ${quote(text)}`);
    }
    const unitText = text.slice(unitStart, i);
    const unitNs = NS_PER_UNIT.get(unitText);
    if (unitNs === undefined) {
      throw new DurationSyntaxError(`time: unknown unit ${quote(unitText)} in duration ${quote(text)}`);
    }

    if (fracPart.length > fractionDigits) {
      numerator *= 10n ** BigInt(fracPart.length - fractionDigits);
      fractionDigits = fracPart.length;
    }
    numerator += BigInt(intPart + fracPart) * unitNs * 10n ** BigInt(fractionDigits - fracPart.length);
  }

  const denominator = 10n ** BigInt(fractionDigits);
  const ns = (2n * numerator + denominator) / (2n * denominator);
  if (ns === 0n) return 0; // never -0
  // Decimal-string parsing rounds correctly once, even beyond 2^53 ns.
  const ms = Number(`${negative ? "-" : ""}${ns}e-6`);
  if (!Number.isFinite(ms)) throw invalid();
  return ms;
}

/**
 * Formats milliseconds exactly like Go's time.Duration.String() after rounding to whole
 * nanoseconds: "0s", "123ns", "1.5µs", "1.234567ms", "2m8.580906589s", "72h3m0.5s".
 * Beyond Go's int64 range the hour count simply keeps growing ("1000000000h0m0s"); the
 * nanosecond digits are those of the double's exact value.
 * Non-finite input never occurs in a correct model, but is printed rather than thrown:
 * "+Inf", "-Inf", "NaN".
 */
export function formatDuration(ms: number): string {
  if (Number.isNaN(ms)) return "NaN";
  if (ms === Infinity) return "+Inf";
  if (ms === -Infinity) return "-Inf";
  const ns = roundToNanos(ms);
  return ns < 0n ? `-${formatNanos(-ns)}` : formatNanos(ns);
}

/** Nearest whole nanosecond to the exact value of the double (halves away from zero). */
function roundToNanos(ms: number): bigint {
  if (Number.isInteger(ms)) return BigInt(ms) * 1_000_000n;
  // A non-integer double is below 2^52 in magnitude; doubling it is exact until it is an
  // integer, giving ms = scaled / 2^shift exactly.
  let scaled = ms;
  let shift = 0n;
  while (!Number.isInteger(scaled)) {
    scaled *= 2;
    shift++;
  }
  const numerator = BigInt(Math.abs(scaled)) * 1_000_000n;
  const denominator = 1n << shift;
  const magnitude = (2n * numerator + denominator) / (2n * denominator);
  return scaled < 0 ? -magnitude : magnitude;
}

/** Go's Duration.format for a non-negative nanosecond count. */
function formatNanos(u: bigint): string {
  if (u < 1_000_000_000n) {
    if (u === 0n) return "0s";
    if (u < 1_000n) return `${u}ns`;
    if (u < 1_000_000n) return `${fixedPoint(u, 3)}\u00b5s`;
    return `${fixedPoint(u, 6)}ms`;
  }
  const seconds = u / 1_000_000_000n;
  const secondsText = `${seconds % 60n}${fraction(u % 1_000_000_000n, 9)}s`;
  const minutes = seconds / 60n;
  if (minutes === 0n) return secondsText;
  const minutesText = `${minutes % 60n}m${secondsText}`;
  // Go stops at hours because days can have different lengths.
  const hours = minutes / 60n;
  return hours === 0n ? minutesText : `${hours}h${minutesText}`;
}

function fixedPoint(value: bigint, precision: number): string {
  const scale = 10n ** BigInt(precision);
  return `${value / scale}${fraction(value % scale, precision)}`;
}

/** ".digits" without trailing zeros, or "" when the fraction is zero (as Go's fmtFrac). */
function fraction(remainder: bigint, precision: number): string {
  if (remainder === 0n) return "";
  return `.${remainder.toString().padStart(precision, "0").replace(/0+$/, "")}`;
}

/**
 * Go's time.quote: double quotes, with `"` and `\` escaped and control or non-ASCII
 * characters written as \xNN per UTF-8 byte (lone surrogates as U+FFFD).
 */
function quote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0xfffd;
    if (cp < 0x20 || cp >= 0x80) {
      for (const byte of utf8(cp)) out += `\\x${byte.toString(16).padStart(2, "0")}`;
    } else {
      if (ch === '"' || ch === "\\") out += "\\";
      out += ch;
    }
  }
  return `${out}"`;
}

function utf8(codePoint: number): number[] {
  const cp = codePoint >= 0xd800 && codePoint <= 0xdfff ? 0xfffd : codePoint;
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 0x3f)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
}
