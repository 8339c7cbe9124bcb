import { readFileSync } from "node:fs";
import { parse } from "yaml";

/*
 * A stand-in for the scenario-file reader (SCENARIO-FORMAT: one YAML file, the flags of a
 * program grouped by their flag group, plus metadata), until that reader is merged: it turns
 * an example file into the command line it means, which the validation and the examples'
 * tests give the simulator's own flag parser, so a key the simulator does not know fails
 * there. It checks no more than the shape; the reader names the file's line.
 */

export interface ExampleFile {
  readonly name: string;
  readonly description: string | undefined;
  readonly source: { readonly title: string; readonly url: string };
  readonly published: string;
  /** The file's flags, in the order of its sections: name to value as typed. */
  readonly flags: Readonly<Record<string, string>>;
}

const SECTIONS = ["system", "strategy", "protection", "observation", "run"] as const;
const METADATA = ["scenario", "name", "description", "source", "published", "faults"];

function flagValue(key: string, value: unknown): string {
  if (Array.isArray(value)) return value.map((item) => flagValue(key, item)).join(",");
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return String(value);
  throw new Error(`${key}: must be a string, a number, a boolean or a list of them`);
}

export function readExampleFile(path: string): ExampleFile {
  const document = parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const fail = (message: string): never => {
    throw new Error(`${path}: ${message}`);
  };
  if (document.scenario !== 1) fail("scenario: must be 1");
  for (const key of Object.keys(document)) {
    if (!METADATA.includes(key) && !(SECTIONS as readonly string[]).includes(key)) fail(`${key}: unknown key`);
  }
  const source = document.source as { title?: unknown; url?: unknown } | undefined;
  if (typeof source?.title !== "string" || typeof source.url !== "string") fail("source: an example needs its title and url");
  if (typeof document.name !== "string" || typeof document.published !== "string") fail("name, published: an example needs both");
  const flags: Record<string, string> = {};
  for (const section of SECTIONS) {
    const values = (document[section] ?? {}) as Record<string, unknown>;
    for (const [key, value] of Object.entries(values)) flags[key] = flagValue(key, value);
  }
  if (document.faults !== undefined) flags.faults = flagValue("faults", document.faults);
  return {
    name: document.name as string,
    description: document.description as string | undefined,
    source: { title: source!.title as string, url: source!.url as string },
    published: (document.published as string).trim(),
    flags,
  };
}

/**
 * A command line of flags, `-name=value` each: the file's, with `overrides` winning, as a flag
 * beside a file does; an override of `null` takes the file's flag away (back to its default).
 */
export function exampleArgs(example: ExampleFile, overrides: Readonly<Record<string, string | null>> = {}): string[] {
  return Object.entries({ ...example.flags, ...overrides }).flatMap(([name, value]) => (value === null ? [] : [`-${name}=${value}`]));
}
