import { InputFileError, UsageError } from "../cli/usage-error.ts";
import { readInputFile } from "../runtime/input-files.ts";
import { checkFileShape } from "./file-shape.ts";
import type { ConfigFormat, PolicyReading } from "./format.ts";
import { formatOf, MAX_CONFIG_BYTES, readConfig } from "./formats.ts";
import type { CheckOwnValues } from "../options/check.ts";

/** What check read: the file, its format and the policies graded. */
export interface CheckInput {
  readonly file: string;
  readonly text: string;
  readonly format: ConfigFormat;
  readonly policies: readonly { readonly index: number; readonly reading: PolicyReading }[];
}

/** A policy's id among choose's candidates: `yours`, or `yours-2` in a file of several. */
export const yoursId = (input: CheckInput, index: number): string => (input.policies.length === 1 ? "yours" : `yours-${index + 1}`);

export async function readInput(file: string, own: CheckOwnValues, formats: readonly ConfigFormat[]): Promise<CheckInput> {
  const text = await readInputFile(file, "configuration", MAX_CONFIG_BYTES + 1);
  if (Buffer.byteLength(text) > MAX_CONFIG_BYTES) {
    throw new InputFileError(`${file}: larger than ${MAX_CONFIG_BYTES / 1024} KiB; a retry configuration is a few KB`);
  }
  checkFileShape(file, text);
  const format = formatOf(file, text, own.format, formats);
  const policies = readConfig(file, text, format).policies.map((reading, index) => ({ index, reading }));
  return { file, text, format, policies: selected(file, policies, own.policy) };
}

/** -policy: a policy's name as check prints it, or its number from 1. */
function selected<T extends { readonly index: number; readonly reading: PolicyReading }>(
  file: string,
  policies: readonly T[],
  wanted: string | undefined,
): T[] {
  if (wanted === undefined) return [...policies];
  const chosen = policies.filter((policy) => policy.reading.name === wanted || String(policy.index + 1) === wanted);
  if (chosen.length === 0) {
    throw new UsageError(
      `invalid value "${wanted}" for flag -policy: ${file} has ${policies.map((policy) => `${policy.index + 1} (${policy.reading.name})`).join(", ")}`,
    );
  }
  return chosen;
}
