import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { HEAP_GROWING_PERCENT } from "../../../src/client/heap-growth.ts";
import { parsedSource, SRC } from "../../helpers/source-files.ts";

/*
 * The client's heap stays near what is live only if its entries set V8's flag before the herd
 * starts (src/client/heap-growth.ts; BENCHMARKS.md has what it saves). A V8 flag set at run time
 * cannot be read back, so this reads the entries: each calls keepHeapNearLive before it runs the
 * client, ./client's entry at its top level and the package's command where it loads the client.
 */

/** For each call of `name` in a file: the statements before the one that holds it, in the block or file around it. */
function callsOf(file: string, name: string): { readonly before: string[] }[] {
  const source = parsedSource(file, readFileSync(join(SRC, file), "utf8"));
  const found: { before: string[] }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.getText(source).endsWith(name)) {
      let statement: ts.Node = node;
      while (!ts.isBlock(statement.parent) && !ts.isSourceFile(statement.parent)) statement = statement.parent;
      const siblings = (statement.parent as ts.Block | ts.SourceFile).statements;
      const index = siblings.indexOf(statement as ts.Statement);
      found.push({ before: siblings.slice(0, index).map((sibling) => sibling.getText(source)) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("the client's heap growth", () => {
  it("is a growth by half, set by ./client's entry before it runs the client", () => {
    expect(HEAP_GROWING_PERCENT).toBe(50);
    const calls = callsOf("bin/client.ts", "keepHeapNearLive");
    expect(calls).toHaveLength(1);
    expect(calls[0]!.before.join("\n")).not.toMatch(/runProgram\(/);
  });

  it("is set by the package's command where it loads the client, before it returns the client's main", () => {
    const calls = callsOf("bin/thundering-herd.ts", "keepHeapNearLive");
    expect(calls).toHaveLength(1);
    expect(calls[0]!.before.join("\n")).toMatch(/import\("\.\.\/client\/main\.ts"\)/);
  });
});
