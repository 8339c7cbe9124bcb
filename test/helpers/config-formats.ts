import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect } from "vitest";
import { ConfigFileError, type ConfigFormat, type PolicyReading } from "../../src/check/format.ts";
import { simValuesFor } from "../../src/recommend/settings.ts";
import { simulationConfigFrom } from "../../src/config/simulation.ts";

/*
 * What every format's test checks the same way: its fixtures, the one-line error for a bad
 * file, the round trips of write and read, and that the simulator takes what a reading says.
 */

const FIXTURES = resolve(import.meta.dirname, "../fixtures/configs");

export const fixture = (format: string, file: string): string => readFileSync(resolve(FIXTURES, format, file), "utf8");

/** The message of the ConfigFileError `run` throws, held to one printable line. */
export function configError(run: () => unknown): string {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ConfigFileError);
  const message = (thrown as Error).message;
  expect(message).not.toContain("\n");
  return message;
}

/** A policy's field readings by field, each as [value, settings]. */
export function fieldsOf(policy: PolicyReading): Record<string, [string, Record<string, string>]> {
  return Object.fromEntries(policy.fields.map((field) => [field.field, [field.value, { ...field.settings }]]));
}

/** A policy's unmodelled fields by field, with their values. */
export const unmodeledOf = (policy: PolicyReading): Record<string, string> =>
  Object.fromEntries(policy.unmodeled.map((field) => [field.field, field.value]));

/** The settings the simulator takes: a reading that it refused would be of no use to check. */
export function expectSimulatorTakes(settings: Readonly<Record<string, string>>): void {
  expect(() => simulationConfigFrom(simValuesFor({}, settings)), JSON.stringify(settings)).not.toThrow();
}

/** A target: the policy's own settings with some flags changed (undefined removes one). */
export function changed(
  settings: Readonly<Record<string, string>>,
  change: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const target: Record<string, string> = { ...settings };
  for (const [flag, value] of Object.entries(change)) {
    if (value === undefined) delete target[flag];
    else target[flag] = value;
  }
  return target;
}

/**
 * Writes `target` into policy `index` of `text` and reads it back: the written text and the
 * settings it now says. Fails when the format found the target inexpressible.
 */
export function writeAndRead(format: ConfigFormat, text: string, index: number, target: Readonly<Record<string, string>>) {
  const written = format.write(text, index, target);
  if (written.kind !== "written") throw new Error(`inexpressible: ${written.why}`);
  return { text: written.text, notes: written.notes, settings: format.read(written.text).policies[index]!.settings };
}

/** Every policy of `text` written with its own settings: the same text, byte for byte. */
export function expectNoOpWrites(format: ConfigFormat, text: string): void {
  format.read(text).policies.forEach((policy, index) => {
    const written = format.write(text, index, policy.settings);
    expect(written, policy.name).toEqual({ kind: "written", text, notes: [] });
  });
}

/** The lines of `after` that are not in `before`, and those of `before` gone: what a diff of the user's file shows. */
export function changedLines(before: string, after: string): { added: string[]; removed: string[] } {
  const beforeLines = before.split("\n");
  const afterLines = after.split("\n");
  return {
    added: afterLines.filter((line) => !beforeLines.includes(line)),
    removed: beforeLines.filter((line) => !afterLines.includes(line)),
  };
}
