import type { Document, Scalar } from "yaml";
import { OUT_OF_RANGE } from "../cli/flags.ts";

/*
 * The limits a scenario file is read within (docs/scenario-files.md): its size, its nesting and
 * its aliases, checked in passes whose cost grows with the file's length alone, before its
 * values are read as flags.
 */

/** The largest file read: the examples are 1–3 KB; a file past this is no scenario, and reading it costs memory. */
export const MAX_SCENARIO_BYTES = 1024 * 1024;

/** The deepest nesting: a tier's upstream is at depth 4 (file, tiers, tier, upstream), a list value 5. */
export const MAX_SCENARIO_DEPTH = 16;

type Yaml = typeof import("yaml");

/** What is wrong, where: the offset in the text, the key it is reported under ("YAML" for the file's shape). */
export interface Located {
  readonly offset: number;
  readonly key: string;
  readonly message: string;
}

/** A text past MAX_SCENARIO_BYTES: the line where it passes the limit; undefined within it. */
export function sizeProblemLine(text: string): number | undefined {
  if (text.length <= MAX_SCENARIO_BYTES / 3 || Buffer.byteLength(text, "utf8") <= MAX_SCENARIO_BYTES) return undefined;
  const within = Buffer.from(text, "utf8").subarray(0, MAX_SCENARIO_BYTES);
  let line = 1;
  for (const byte of within) if (byte === 0x0a) line++;
  return line;
}

/**
 * One walk over the parsed file, with a stack of its own so that nesting costs no call stack:
 * the first (in the file's order) of a collection nested deeper than MAX_SCENARIO_DEPTH, a key
 * given twice in one mapping (a set per mapping: the parser's own check compares each key with
 * every one before it), or a number that does not read as written (out of range).
 */
export function documentProblem(yaml: Yaml, doc: Document): Located | undefined {
  const stack: { node: unknown; depth: number; key: string }[] = [{ node: doc.contents, depth: 1, key: "scenario" }];
  while (stack.length > 0) {
    const { node, depth, key } = stack.pop()!;
    if (yaml.isScalar(node)) {
      const problem = numberProblem(node);
      if (problem !== undefined) return { offset: node.range?.[0] ?? 0, key, message: problem };
      continue;
    }
    if (!yaml.isCollection(node)) continue;
    const offset = node.range?.[0] ?? 0;
    if (depth > MAX_SCENARIO_DEPTH) return { offset, key: "YAML", message: `nested deeper than ${MAX_SCENARIO_DEPTH} levels` };
    const children: { node: unknown; depth: number; key: string }[] = [];
    if (yaml.isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const name = yaml.isScalar(pair.key) ? pair.key.value : pair.key;
        if (seen.has(name)) {
          return {
            offset: yaml.isNode(pair.key) ? (pair.key.range?.[0] ?? offset) : offset,
            key: "YAML",
            message: "Map keys must be unique",
          };
        }
        seen.add(name);
        children.push({ node: pair.key, depth: depth + 1, key }, { node: pair.value, depth: depth + 1, key: String(name) });
      }
    } else {
      for (const item of node.items) children.push({ node: item, depth: depth + 1, key });
    }
    // Reversed onto the stack, so that they come off it in the file's order.
    for (let index = children.length - 1; index >= 0; index--) stack.push(children[index]!);
  }
  return undefined;
}

/** A number the parser read as other than what is written: an integer past 2^53 − 1, or a float past the largest double. */
function numberProblem(node: Scalar): string | undefined {
  if (typeof node.value !== "number" || node.source === undefined) return undefined;
  const written = String(node.source);
  if (!Number.isFinite(node.value)) {
    // .inf and .nan are what they say; 1e999 is not.
    return /\d/.test(written) ? `invalid value "${written}": ${OUT_OF_RANGE.number}` : undefined;
  }
  // A hex integer's digits may be e or E (0xFFFFFFFFFFFFFFFE): only a decimal with . or an exponent is a float.
  const floatNotation = !/^[-+]?0[xo]/i.test(written) && /[.eE]/.test(written);
  return Number.isInteger(node.value) && !Number.isSafeInteger(node.value) && !floatNotation
    ? `invalid value "${written}": ${OUT_OF_RANGE.integer}`
    : undefined;
}

/** Where the first alias is: the line a file whose aliases expand past the parser's limit is reported at. */
export function firstAliasOffset(yaml: Yaml, doc: Document): number {
  let offset = 0;
  yaml.visit(doc, {
    Alias(_key, node) {
      offset = node.range?.[0] ?? 0;
      return yaml.visit.BREAK;
    },
  });
  return offset;
}
