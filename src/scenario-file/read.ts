import { readInputFile } from "../runtime/input-files.ts";
import type { Document } from "yaml";
import type { FlagSpec } from "../cli/flags.ts";
import { excerpt, InputFileError } from "../cli/usage-error.ts";
import { type Workload, WORKLOADS } from "../cli/workload.ts";
import {
  FAULTS_KEY,
  type LoadedScenario,
  type MeasuredPastSaturation,
  SCENARIO_SECTIONS,
  type ScenarioMetadata,
  type ScenarioSection,
  sectionOf,
  WORKLOAD_KEY,
} from "./format.ts";
import { type ScenarioTarget, workloadOf } from "../options/scenario-target.ts";
import { carrierNames, MEASURED_KEYS, type ScenarioData, scenarioSchema, type SectionKey, sectionKeys } from "./schema.ts";
import { SCENARIO_TARGETS } from "./targets.ts";
import { documentProblem, firstAliasOffset, type Located, MAX_SCENARIO_BYTES, MAX_SCENARIO_DEPTH, sizeProblemLine } from "./document.ts";
import { type ScenarioTier, TIER_KEYS, TIER_SYSTEM_FLAGS, UPSTREAM_FLAGS, USER_FLAG_NAMES } from "./tiers.ts";

/** The top-level keys of a file: metadata, then the sections. */
const TOP_KEYS = ["scenario", "name", "description", "source", "published", "measured", WORKLOAD_KEY, ...SCENARIO_SECTIONS, "tiers"];
const SOURCE_KEYS = ["title", "url", "date"];

/**
 * Reads a scenario file for a program (its target for each workload it runs); any mistake is an
 * InputFileError of one line, `FILE:LINE: key: what is wrong`.
 */
export async function readScenarioFile(file: string, target: ScenarioTarget | readonly ScenarioTarget[]): Promise<LoadedScenario> {
  const text = await readInputFile(file, "scenario file", MAX_SCENARIO_BYTES + 1);
  return parseScenario(text, file, target);
}

/**
 * A scenario file's text as one program reads it; `file` names it in errors. The file's workload
 * picks the program's target and the sections' keys; every other program's keys of that workload are known.
 */
export async function parseScenario(
  text: string,
  file: string,
  programTargets: ScenarioTarget | readonly ScenarioTarget[],
  everyTarget: readonly ScenarioTarget[] = SCENARIO_TARGETS,
): Promise<LoadedScenario> {
  const [yaml, { z }] = await Promise.all([import("yaml"), import("zod")]);
  const { doc, fail, lineOf } = readDocument(yaml, text, file);
  if (!yaml.isMap(doc.contents)) {
    const offset = doc.contents?.range?.[0] ?? 0;
    throw doc.contents === null
      ? fail(offset, "scenario", "missing: the file is empty")
      : fail(offset, "scenario", "a scenario file is a mapping of keys, starting with scenario: 1");
  }
  const workloadValue: unknown = doc.get(WORKLOAD_KEY);
  const workload = (workloadValue ?? "requests") as Workload;
  if (!(WORKLOADS as readonly unknown[]).includes(workload)) {
    throw fail(nodeOffset(yaml, doc, [WORKLOAD_KEY]), WORKLOAD_KEY, `must be one of ${WORKLOADS.join(", ")}`);
  }
  const targets: readonly ScenarioTarget[] = Array.isArray(programTargets) ? programTargets : [programTargets as ScenarioTarget];
  const target = targets.find((candidate) => workloadOf(candidate) === workload);
  if (target === undefined) {
    const runners = everyTarget.filter((other) => workloadOf(other) === workload).map((other) => `./${other.program}`);
    throw fail(
      nodeOffset(yaml, doc, [WORKLOAD_KEY]),
      WORKLOAD_KEY,
      `${targets[0]!.program} does not run workload ${workload}; ${[...new Set(runners)].join(", ")} does`,
    );
  }
  const others = everyTarget.filter((other) => workloadOf(other) === workload);
  const sections = sectionKeys(target, others);
  const parsed = scenarioSchema(z, sections).safeParse(plainValue(yaml, doc, fail));
  if (!parsed.success) {
    const first = firstIssue(yaml, doc, parsed.error.issues, (path, key) =>
      whereKeyBelongs(path, key, sections, [target, ...others], { workload, everyTarget }),
    );
    throw fail(first.offset, first.key, first.message);
  }
  const data = parsed.data;
  // A chain is of the requests workload's servers; another workload would quietly run without it.
  if (data.tiers !== undefined && workload !== "requests") {
    throw fail(
      keyOffset(yaml, doc, ["tiers"]),
      "tiers",
      `workload ${workload} has no chain of tiers; a chain is a scenario of workload requests`,
    );
  }
  const tiers =
    data.tiers === undefined ? undefined : readTiers(data, (path, key, message) => fail(nodeOffset(yaml, doc, path), key, message));
  const tokens: string[] = [];
  const passThrough: Record<string, string[]> = Object.fromEntries((target.passThrough ?? []).map((pass) => [pass.flag, []]));
  const ignored: string[] = [];
  const keyLines: Record<string, number> = {};
  for (const section of SCENARIO_SECTIONS) {
    const entries = section === "faults" ? [[FAULTS_KEY, data.faults] as const] : Object.entries(data[section] ?? {});
    for (const [name, value] of entries) {
      if (value === undefined) continue;
      const key = sections.get(section)!.get(name)!;
      const token = `-${name}=${value}`;
      keyLines[name] = lineOf(keyOffset(yaml, doc, section === "faults" ? [FAULTS_KEY] : [section, name]));
      if (!key.taken) ignored.push(section === "faults" ? name : `${section}.${name}`);
      else if (key.carriers.length === 0) tokens.push(token);
      else for (const carrier of key.carriers) passThrough[carrier]!.push(token);
    }
  }
  const metadata: ScenarioMetadata = {
    ...(data.name === undefined ? {} : { name: data.name }),
    ...(data.description === undefined ? {} : { description: data.description }),
    ...(data.source === undefined ? {} : { source: data.source }),
    ...(data.published === undefined ? {} : { published: data.published }),
    ...(data.measured === undefined ? {} : { measured: data.measured as Partial<MeasuredPastSaturation> }),
  };
  return { file, text, tokens, passThrough, ignored, keyLines, metadata, workload, ...(tiers === undefined ? {} : { tiers }) };
}

type Failure = (path: Path, key: string, message: string) => InputFileError;

type Fail = (offset: number, key: string, message: string) => InputFileError;

/**
 * The text as a YAML document within the file's limits (document.ts), and the error for a
 * mistake at an offset, `FILE:LINE: key: message`; an InputFileError for text that is neither.
 */
function readDocument(yaml: Yaml, text: string, file: string): { doc: Document; fail: Fail; lineOf: (offset: number) => number } {
  const pastLimit = sizeProblemLine(text);
  if (pastLimit !== undefined) {
    throw new InputFileError(
      `${file}:${pastLimit}: the file goes on past ${MAX_SCENARIO_BYTES / 1024 / 1024} MiB here; a scenario file is a few KB`,
    );
  }
  const lineCounter = new yaml.LineCounter();
  // Unique keys are checked by documentProblem, in one pass.
  const doc = yaml.parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: false });
  const fail: Fail = (offset, key, message) =>
    new InputFileError(`${file}:${lineCounter.linePos(offset).line}: ${excerpt(key)}: ${message}`);
  const yamlError = doc.errors[0];
  if (yamlError !== undefined) {
    const message = yamlError.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    // The parser's recursion gave out before the depth check could run.
    const said = message.startsWith("Maximum call stack size exceeded") ? `nested deeper than ${MAX_SCENARIO_DEPTH} levels` : message;
    throw new InputFileError(`${file}:${yamlError.linePos?.[0].line ?? 1}: YAML: ${said}`);
  }
  const shape = documentProblem(yaml, doc);
  if (shape !== undefined) throw fail(shape.offset, shape.key, shape.message);
  return { doc, fail, lineOf: (offset) => lineCounter.linePos(offset).line };
}

/**
 * The document as plain values. What the parser finds wrong with its aliases only here is the
 * file's mistake: aliases that expand past its limit (an alias bomb), or an alias of no anchor.
 */
function plainValue(yaml: Yaml, doc: Document, fail: Fail): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (!(error instanceof ReferenceError)) throw error;
    if (error.message.startsWith("Excessive alias count")) {
      throw fail(firstAliasOffset(yaml, doc), "YAML", `too many aliases: they expand past ${MAX_ALIAS_COUNT} copies`);
    }
    if (error.message.startsWith("Unresolved alias")) throw fail(firstAliasOffset(yaml, doc), "YAML", error.message);
    throw error;
  }
}

/** The parser's own limit on what aliases may expand to (its default). */
const MAX_ALIAS_COUNT = 100;

/**
 * The issue that comes first in the file. An unknown key's place is looked up in a map of its
 * mapping's keys, made once per mapping, and only the first one's message is worded, so that
 * thousands of unknown keys cost one pass; the message says how many more there are.
 */
function firstIssue(
  yaml: Yaml,
  doc: Document,
  issues: readonly import("zod").core.$ZodIssue[],
  unknownKey: (path: Path, key: string) => string,
): Located {
  const keyOffsets = new Map<string, Map<string, number>>();
  const offsetOfKey = (path: Path, key: string) => {
    const id = JSON.stringify(path);
    let offsets = keyOffsets.get(id);
    if (offsets === undefined) {
      offsets = mapKeyOffsets(yaml, doc, path);
      keyOffsets.set(id, offsets);
    }
    return offsets.get(key) ?? nodeOffset(yaml, doc, path);
  };
  let first: (Located & { unknown?: Path }) | undefined;
  let unknownKeys = 0;
  for (const issue of issues) {
    const path = issue.path.filter((part) => typeof part !== "symbol");
    if (issue.code === "unrecognized_keys") {
      unknownKeys += issue.keys.length;
      for (const key of issue.keys) {
        const offset = offsetOfKey(path, key);
        if (first === undefined || offset < first.offset) first = { offset, key, message: "", unknown: path };
      }
      continue;
    }
    const key = [...path].reverse().find((part): part is string => typeof part === "string") ?? "scenario";
    const offset = nodeOffset(yaml, doc, path);
    if (first === undefined || offset < first.offset) first = { offset, key, message: issue.message };
  }
  if (first?.unknown === undefined) return first!;
  const more = unknownKeys - 1;
  const others = more === 0 ? "" : `; and ${more} more unknown ${more === 1 ? "key" : "keys"}`;
  return { offset: first.offset, key: first.key, message: `${unknownKey(first.unknown, first.key)}${others}` };
}

/** Where each key of the mapping at `path` is written. */
function mapKeyOffsets(yaml: Yaml, doc: Document, path: Path): Map<string, number> {
  const map = path.length === 0 ? doc.contents : doc.getIn(path, true);
  const offsets = new Map<string, number>();
  if (!yaml.isMap(map)) return offsets;
  for (const pair of map.items) {
    if (yaml.isScalar(pair.key) && pair.key.range) offsets.set(String(pair.key.value), pair.key.range[0]);
  }
  return offsets;
}

/**
 * A file's chain: each tier's flags as tokens. With tiers, the top-level system is the users'
 * alone (their server is the first tier); a server's flag there is refused, naming where it goes.
 */
function readTiers(data: ScenarioData, fail: Failure): ScenarioTier[] {
  for (const key of Object.keys(data.system ?? {})) {
    if (!USER_FLAG_NAMES.has(key)) {
      throw fail(["system", key], key, "with tiers:, system holds the users' flags only; a server's flag goes in each tier's system");
    }
  }
  const tiers = data.tiers!;
  const names = new Set<string>();
  return tiers.map((tier, index) => {
    if (names.has(tier.name)) throw fail(["tiers", index, "name"], "name", `a second tier named ${tier.name}: each tier has its own name`);
    names.add(tier.name);
    const bottom = index === tiers.length - 1;
    if (bottom && tier.upstream !== undefined) throw fail(["tiers", index, "upstream"], "upstream", "the bottom tier calls nobody");
    if (bottom && tier.fanout !== undefined) throw fail(["tiers", index, "fanout"], "fanout", "the bottom tier calls nobody");
    const system = tier.system ?? {};
    const upstream = tier.upstream ?? {};
    const tokensOf = (values: Record<string, string>) => Object.entries(values).map(([name, value]) => `-${name}=${value}`);
    return {
      name: tier.name,
      system: tokensOf(system),
      upstream: tokensOf(upstream),
      fanout: tier.fanout ?? 1,
      written: { system, upstream },
    };
  });
}

type Yaml = typeof import("yaml");
type Path = readonly (string | number)[];

/** Where a key is written: its own position in its map, else where its map starts. */
function keyOffset(yaml: Yaml, doc: Document, path: Path): number {
  const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
  if (yaml.isMap(parent)) {
    const pair = parent.items.find((item) => yaml.isScalar(item.key) && item.key.value === path.at(-1));
    if (pair !== undefined && yaml.isNode(pair.key) && pair.key.range) return pair.key.range[0];
  }
  return yaml.isNode(parent) && parent.range ? parent.range[0] : 0;
}

/** Where a value is written, or else its key, or else the nearest enclosing node that is there. */
function nodeOffset(yaml: Yaml, doc: Document, path: Path): number {
  for (let length = path.length; length > 0; length--) {
    const node = doc.getIn(path.slice(0, length), true);
    if (yaml.isNode(node) && node.range) return node.range[0];
    const parent = length === 1 ? doc.contents : doc.getIn(path.slice(0, length - 1), true);
    if (yaml.isMap(parent) && parent.has(path[length - 1])) return keyOffset(yaml, doc, path.slice(0, length));
  }
  return yaml.isNode(doc.contents) && doc.contents.range ? doc.contents.range[0] : 0;
}

/** Why a key is refused, pointing where it belongs when it is a flag of another section. */
function whereKeyBelongs(
  parent: Path,
  key: string,
  sections: Map<ScenarioSection, Map<string, SectionKey>>,
  targets: readonly ScenarioTarget[],
  file: { readonly workload: Workload; readonly everyTarget: readonly ScenarioTarget[] },
): string {
  if (parent[0] === "source") return `unknown key; source has ${SOURCE_KEYS.join(", ")}`;
  if (parent[0] === "measured") return `unknown key; measured has ${MEASURED_KEYS.join(", ")}`;
  if (parent[0] === "tiers") return whereTierKeyBelongs(parent, key);
  const home = [...sections].find(([, keys]) => keys.has(key))?.[0];
  const section = parent[0] as ScenarioSection | undefined;
  if (home !== undefined)
    return section === undefined ? `a flag: it belongs in section ${home}` : `belongs in section ${home}, not ${section}`;
  if (key === WORKLOAD_KEY) return "a top-level key, not a section's: workload: occ at the start of the file";
  const otherWorkload = file.everyTarget.find(
    (other) => workloadOf(other) !== file.workload && other.flags.some((flag) => flag.name === key && sectionOf(flag) !== undefined),
  );
  if (otherWorkload !== undefined) {
    const theirs = workloadOf(otherWorkload);
    return theirs === "requests"
      ? `a flag of workload requests, not of workload ${file.workload} that this file names`
      : `a flag of workload ${theirs}: a file of that workload says workload: ${theirs} at the top`;
  }
  if (carrierNames(targets).includes(key)) return "write the flags it carries in their own sections, e.g. system: backlog: 64";
  const everyFlag: FlagSpec[] = targets.flatMap((target) => [...target.flags, ...(target.passThrough ?? []).flatMap((pass) => pass.flags)]);
  if (everyFlag.some((flag) => flag.name === key && sectionOf(flag) === undefined)) {
    return "an output flag: give it on the command line, not in a scenario file";
  }
  const candidates = section === undefined ? TOP_KEYS : [...sections.get(section)!.keys()];
  const near = candidates.find((candidate) => editDistance(candidate, key) <= 2);
  const hint = near === undefined ? "" : `; did you mean ${near}?`;
  return section === undefined ? `unknown key${hint}` : `unknown key in section ${section}: not a flag of any program${hint}`;
}

/** Why a key of a tier is refused: a tier's keys, its system's server flags, its upstream's retry-policy flags. */
function whereTierKeyBelongs(parent: Path, key: string): string {
  const part = parent[2];
  const [keys, what] =
    part === "system"
      ? [TIER_SYSTEM_FLAGS.map((flag) => flag.name), "a tier's system takes ./server's model and protection flags"]
      : part === "upstream"
        ? [UPSTREAM_FLAGS.map((flag) => flag.name), "a tier's upstream takes the client's retry-policy flags"]
        : [TIER_KEYS, `a tier has ${TIER_KEYS.join(", ")}`];
  const near = keys.find((candidate) => editDistance(candidate, key) <= 2);
  return `unknown key; ${what}${near === undefined ? "" : `; did you mean ${near}?`}`;
}

/** Levenshtein distance, for suggesting a misspelt key; past 2 apart in length, not computed (a long key costs nothing). */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return Math.abs(a.length - b.length);
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    previous = current;
  }
  return previous[b.length]!;
}
