import { type Node, parseTree } from "jsonc-parser";
import { InputFileError } from "../cli/usage-error.ts";

/*
 * What any configuration file must be before a format reads it: not nested past what a
 * configuration ever is (the JSON parser recurses, and a file of 20 000 "[" ran it out of
 * stack), and, when it is JSON, no key given twice in one object, in any case (JSON.parse-like
 * readers keep the last, an editor edits the first, and .NET's configuration refuses the file).
 */

/** A retry configuration nests a few levels (Envoy's bootstrap, about ten); far more is not one. */
export const MAX_NESTING = 64;

/**
 * The deepest nesting of brackets and braces outside double-quoted strings and comments (#, //,
 * /* *\/), stopping once past `limit`. A single quote is not taken for a string: YAML's plain
 * words have apostrophes, and one in a comment or a word hid the rest of a file from the count.
 */
function nestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length && deepest <= limit; index++) {
    const char = text[index]!;
    if (inString) {
      if (char === "\\") index++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === "#" || (char === "/" && text[index + 1] === "/")) index = lineEnd(text, index);
    else if (char === "/" && text[index + 1] === "*") index = blockEnd(text, index);
    else if (char === "[" || char === "{") deepest = Math.max(deepest, ++depth);
    else if (char === "]" || char === "}") depth = Math.max(0, depth - 1);
  }
  return deepest;
}

const lineEnd = (text: string, from: number) => {
  const end = text.indexOf("\n", from);
  return end < 0 ? text.length : end;
};

const blockEnd = (text: string, from: number) => {
  const end = text.indexOf("*/", from + 2);
  return end < 0 ? text.length : end + 1;
};

const lineOf = (text: string, offset: number) => text.slice(0, offset).split("\n").length;

/**
 * The first key given twice in one object of a JSON text, with the lines and spellings of both;
 * undefined when none is. Keys are compared whatever their case: grpc-go and .NET's configuration
 * read them so, and take "maxAttempts" and "MaxAttempts" for one key.
 */
function duplicateKey(text: string): { key: string; firstKey: string; first: number; again: number } | undefined {
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  const stack: Node[] = tree === undefined ? [] : [tree];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === "object") {
      const seen = new Map<string, Node>();
      for (const property of node.children ?? []) {
        const name = property.children?.[0];
        if (name === undefined || typeof name.value !== "string") continue;
        const folded = name.value.toLowerCase();
        const before = seen.get(folded);
        if (before !== undefined) {
          return {
            key: name.value,
            firstKey: before.value as string,
            first: lineOf(text, before.offset),
            again: lineOf(text, name.offset),
          };
        }
        seen.set(folded, name);
      }
    }
    stack.push(...(node.children ?? []));
  }
  return undefined;
}

/** One InputFileError line for a file no format should be given: nested too deep, or JSON with a key twice. */
export function checkFileShape(file: string, text: string): void {
  if (nestingDepth(text, MAX_NESTING) > MAX_NESTING) {
    throw new InputFileError(`${file}: nested more than ${MAX_NESTING} levels deep; a retry configuration is not`);
  }
  // JSON (with comments), as the JSON formats read it: its first character that is no space or comment opens an object or array.
  const start = text.replace(/^(?:\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*/, "")[0];
  if (start !== "{" && start !== "[") return;
  const twice = duplicateKey(text);
  if (twice !== undefined) {
    const spelled = twice.firstKey === twice.key ? "" : ` as "${twice.firstKey}"`;
    throw new InputFileError(
      `${file}:${twice.again}: "${twice.key}" given twice in one object (first at line ${twice.first}${spelled}): give it once`,
    );
  }
}
