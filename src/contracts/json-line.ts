import type { z } from "zod";
import { printable } from "../cli/usage-error.ts";

/** Where a line came from, for messages: a file (or a program's output) and its 1-based line number. */
export interface LinePlace {
  readonly file: string;
  readonly line: number;
}

/**
 * A file or output that does not hold what its contract says; the message is one printable
 * line naming it (what it quotes of the file, or the file's name, escaped).
 */
export class ContractError extends Error {
  override readonly name: string = "ContractError";
  constructor(message: string) {
    super(printable(message));
  }
}

/** A line that does not match its contract; the message names the file and line. */
export class LineError extends ContractError {
  override readonly name = "LineError";
  readonly place: LinePlace;
  constructor(place: LinePlace, problem: string) {
    super(`${place.file}:${place.line}: ${problem}`);
    this.place = place;
  }
}

/** The JSON object on one line, or a LineError saying it is none. */
export function parseJsonObject(text: string, place: LinePlace, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LineError(place, `not valid JSON (is this ${what}?)`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new LineError(place, `not a JSON object (is this ${what}?)`);
  return value as Record<string, unknown>;
}

/** `value` checked against `schema`: the typed object, or a LineError naming the first field that does not match. */
export function checkLine<Schema extends z.ZodType>(schema: Schema, value: unknown, place: LinePlace, what: string): z.output<Schema> {
  const checked = schema.safeParse(value);
  if (checked.success) return checked.data;
  const issue = checked.error.issues[0]!;
  const field = issue.path.length === 0 ? "" : `"${issue.path.join(".")}": `;
  throw new LineError(place, `${field}${issue.message.replace(/^Invalid input: /, "")} (is this ${what}?)`);
}

/**
 * Every JSON line of a text (a file, a program's output), numbered as in the text; lines that
 * are not JSON objects (start-up lines that a pod's log interleaves) are left out.
 */
export function jsonLines(lines: readonly string[]): { readonly text: string; readonly line: number }[] {
  return [...eachJsonLine(lines)];
}

/** jsonLines one at a time, for lines read as they come (a file read in bounded memory). */
export function* eachJsonLine(lines: Iterable<string>): Generator<{ readonly text: string; readonly line: number }> {
  let number = 0;
  for (const raw of lines) {
    number++;
    const text = raw.trim();
    if (text.startsWith("{")) yield { text, line: number };
  }
}
