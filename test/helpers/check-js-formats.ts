import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect } from "vitest";
import { formatDuration, parseDuration } from "../../src/cli/duration.ts";
import type { FlagSettings } from "../../src/recommend/settings.ts";
import { meaningDifference } from "../../src/check/formats/json-options.ts";
import { ConfigFileError, type CheckFlag, type ConfigFormat, type Written } from "../../src/check/format.ts";

/*
 * What the tests of check's JSON formats (Polly, cockatiel, p-retry) share: their fixtures, the
 * round-trip law (a no-op write gives the same bytes; a knob changed and written reads back as
 * that knob's new value, or the nearest with a note), and the one-line error of a bad file.
 */

const FIXTURES = resolve(import.meta.dirname, "../fixtures/configs");

export const fixture = (format: string, name: string): string => readFileSync(resolve(FIXTURES, format, name), "utf8");

/** The settings with one knob moved to a value a neighbour search would try; undefined where the knob does not apply. */
export function movedKnob(settings: FlagSettings, knob: CheckFlag): FlagSettings | undefined {
  const value = settings[knob];
  const duration = (text: string | undefined) => (text === undefined ? undefined : parseDuration(text));
  switch (knob) {
    case "max-attempts":
      return { ...settings, [knob]: value === "0" || value === undefined ? "3" : String(Number(value) + 1) };
    case "min-delay": {
      if (value === undefined) return undefined;
      const max = duration(settings["max-delay"]) ?? Infinity;
      const doubled = 2 * parseDuration(value);
      return { ...settings, [knob]: formatDuration(doubled <= max ? doubled : parseDuration(value) / 2) };
    }
    case "max-delay": {
      if (value === undefined) return undefined;
      const min = duration(settings["min-delay"]) ?? 0;
      // A cap that stands for "none" (hundreds of hours) moves to a real one.
      const current = parseDuration(value);
      return { ...settings, [knob]: formatDuration(current > 3_600_000 ? Math.max(min, 30_000) : Math.max(min, current * 2)) };
    }
    case "backoff-factor":
      return value === undefined ? undefined : { ...settings, [knob]: String(Number(value) + 1) };
    case "breaker": {
      // On: off, with its parameters; off: cockatiel's README breaker, five failures in a row.
      if (value === undefined) return { ...settings, breaker: "consecutive", "breaker-failures": "5", "breaker-break": "10s" };
      return Object.fromEntries(Object.entries(settings).filter(([name]) => !name.startsWith("breaker")));
    }
    case "timeout":
      return { ...settings, [knob]: formatDuration(2 * (duration(value) ?? 2000)) };
    case "breaker-failures":
    case "breaker-min-throughput":
      return value === undefined ? undefined : { ...settings, [knob]: String(Number(value) + 10) };
    case "breaker-ratio":
      return value === undefined ? undefined : { ...settings, [knob]: String(Number(value) / 2) };
    case "breaker-window":
    case "breaker-break":
      return value === undefined ? undefined : { ...settings, [knob]: formatDuration(2 * parseDuration(value)) };
    default:
      return undefined;
  }
}

/** A written result's text, failing the test with its reason when the target was inexpressible. */
export function writtenText(written: Written, label: string): string {
  if (written.kind !== "written") throw new Error(`${label}: inexpressible: ${written.why}`);
  return written.text;
}

/**
 * The round-trip law for every policy of a file: writing what it reads changes no byte; writing
 * each knob moved reads back as the target (or with a note saying what is nearest), and changes
 * the text. Returns the knobs moved and those the format could not say, per policy, for the caller
 * to check that the law was exercised and which moves were refused.
 */
export function expectRoundTrips(format: ConfigFormat, text: string): { moved: string[]; inexpressible: string[] } {
  const moved: string[] = [];
  const inexpressible: string[] = [];
  format.read(text).policies.forEach((policy, index) => {
    const label = `${format.name} ${policy.name}`;
    expect(writtenText(format.write(text, index, policy.settings), label), `${label}: no-op write`).toBe(text);
    for (const knob of format.knobs) {
      const target = movedKnob(policy.settings, knob);
      if (target === undefined) continue;
      const written = format.write(text, index, target);
      if (written.kind === "inexpressible") {
        inexpressible.push(`${policy.name}: ${knob}: ${written.why}`);
        continue;
      }
      const again = format.read(written.text).policies[index]!;
      const difference = meaningDifference(again.settings, target);
      if (difference !== undefined) expect(written.notes.join("\n"), `${label}, ${knob}: ${difference}`).toContain("nearest");
      // A knob whose move changes no wait (a cap never reached) leaves the file as it is.
      if (meaningDifference(policy.settings, target) !== undefined) expect(written.text, `${label}, ${knob}`).not.toBe(text);
      expect(format.read(written.text).policies.length).toBe(format.read(text).policies.length);
      moved.push(`${policy.name}: ${knob}`);
    }
  });
  return { moved, inexpressible };
}

/** The one printable line a bad file gives: a ConfigFileError, no stack trace in its message. */
export function configError(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    return message;
  }
  throw new Error("the file was read without an error");
}

/** The lines of `after` that differ from `before`'s, as a diff shows them (both have the same line count where only values change). */
export function changedLines(before: string, after: string): string[] {
  const old = new Set(before.split("\n"));
  return after.split("\n").filter((line) => !old.has(line));
}
