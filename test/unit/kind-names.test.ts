import ts from "typescript";
import { describe, expect, it } from "vitest";
import { parsedSource, srcSources } from "../helpers/source-files.ts";
import { POLICY_KINDS } from "../../src/backoff/policy.ts";
import { FAULT_KINDS } from "../../src/model/faults/kinds.ts";
import { SERVER_MODEL_KINDS } from "../../src/model/servers/models.ts";

/*
 * docs/design.md: a kind is one definition, and the rest of the house asks its properties, never
 * its name. This reads every file under src/ (TypeScript and the pages' JavaScript) with the
 * compiler's parser and finds each comparison with a kind's name (`x.kind === "stop"`, `!==`,
 * `case "stop":`) outside the kind's own definition.
 *
 * - Fault kinds (src/model/faults/kinds/<kind>.ts) and server models
 *   (src/model/servers/kinds/<name>.ts): none anywhere else.
 * - Backoff policies (src/backoff/policies/<kind>.ts): none anywhere else either. A policy's name
 *   that is also another kind's (a retry budget's `grpc`, a server model's `exponential`) is held
 *   by an exact list of the places that compare a `.kind` with it, so that no new one appears
 *   unnoticed.
 */

interface Comparison {
  readonly file: string;
  readonly name: string;
  /** The expression compared with the name: `fault.kind`, `spec.kind`. */
  readonly subject: string;
}

/** Every comparison of an expression with a string literal, and every `case` of a switch on one, in a file's text. */
function comparisons(file: string, text: string): Comparison[] {
  const source = parsedSource(file, text);
  const found: Comparison[] = [];
  const equality = new Set([
    ts.SyntaxKind.EqualsEqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsToken,
  ]);
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && equality.has(node.operatorToken.kind)) {
      const [literal, other] = ts.isStringLiteralLike(node.right) ? [node.right, node.left] : [node.left, node.right];
      if (ts.isStringLiteralLike(literal)) found.push({ file, name: literal.text, subject: other.getText(source) });
    }
    if (ts.isSwitchStatement(node)) {
      for (const clause of node.caseBlock.clauses) {
        if (ts.isCaseClause(clause) && ts.isStringLiteralLike(clause.expression))
          found.push({ file, name: clause.expression.text, subject: node.expression.getText(source) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const ALL = srcSources().flatMap(({ file, text }) => comparisons(file, text));

/** The comparisons with a fault kind's name outside that kind's own file, as lines. */
function faultKindComparisons(found: readonly Comparison[]): string[] {
  return (
    found
      .filter(({ file, name }) => (FAULT_KINDS as readonly string[]).includes(name) && file !== `model/faults/kinds/${name}.ts`)
      // A fault kind's name is a common word: only a comparison on what holds a kind counts (`fault.kind`, the page's `fault.fault`).
      .filter(({ subject }) => /(^|\.)(kind|fault)$/.test(subject))
      .map(({ file, name, subject }) => `src/${file}: ${subject} against "${name}"`)
  );
}

/** The comparisons of a `.kind` with a server model's name outside that model's own file (a policy's name too: see the list). */
function serverModelComparisons(found: readonly Comparison[]): string[] {
  return found
    .filter(({ file, name }) => SERVER_MODEL_ONLY.includes(name) && file !== `model/servers/kinds/${name}.ts`)
    .filter(({ subject }) => /(^|\.)kind$/.test(subject))
    .map(({ file, name, subject }) => `src/${file}: ${subject} against "${name}"`);
}

/** Server models' names that are no policy's. */
const SERVER_MODEL_ONLY: readonly string[] = SERVER_MODEL_KINDS.filter((name) => !(POLICY_KINDS as readonly string[]).includes(name));

/** `file: name × count`, sorted, for the places compared with one of `names` on a `.kind` (or `kind`). */
function placesComparingKind(names: readonly string[], found: readonly Comparison[] = ALL): string[] {
  const counts = new Map<string, number>();
  for (const { file, name, subject } of found) {
    if (!names.includes(name) || !/(^|\.)kind$/.test(subject)) continue;
    const key = `${file}: ${name}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `${key} × ${count}`).sort();
}

describe("kinds are asked, not named", () => {
  it("compares a fault's kind with a name only in that kind's definition", () => {
    expect(faultKindComparisons(ALL), "ask the kind's definition (src/model/faults/kinds.ts: faultKind, playedAs) instead").toEqual([]);
  });

  it("finds such a comparison where one is written, in TypeScript and in a page's script (the check itself)", () => {
    const planted = [
      ...comparisons(
        "model/verdict.ts",
        'if (fault.kind === "stop") {}\nswitch (f.kind) { case "crash": break; }\nconst spike = phase === "spike";',
      ),
      ...comparisons("dashboard/page/dashboard.js", 'runs.some((fault) => "crash" !== fault.fault);'),
      ...comparisons("model/faults/kinds/stop.ts", 'if (fault.kind === "stop") {}'),
    ];
    expect(faultKindComparisons(planted)).toEqual([
      'src/model/verdict.ts: fault.kind against "stop"',
      'src/model/verdict.ts: f.kind against "crash"',
      'src/dashboard/page/dashboard.js: fault.fault against "crash"',
    ]);
  });

  it("compares a server model's kind with a name only in that model's definition", () => {
    expect(serverModelComparisons(ALL), "ask the model's definition (src/model/servers/models.ts: modelOf, middleTierOf) instead").toEqual(
      [],
    );
  });

  it("finds a server model's name compared outside its definition, or a shared name anywhere new (the check itself)", () => {
    const planted = [
      ...comparisons("runner/chain.ts", 'if (tier.model.kind !== "queue") {}\nswitch (spec.kind) { case "linear": break; }'),
      ...comparisons("model/servers/kinds/queue.ts", 'if (spec.kind === "queue") {}'),
      ...comparisons("sim/main.ts", 'if (spec.kind === "exponential") {}'),
    ];
    expect(serverModelComparisons(planted)).toEqual([
      'src/runner/chain.ts: tier.model.kind against "queue"',
      'src/runner/chain.ts: spec.kind against "linear"',
    ]);
    expect(placesComparingKind(POLICY_KINDS, planted)).toEqual(["sim/main.ts: exponential × 1"]);
  });

  it("compares a backoff policy's name with a `.kind` only where that kind is another thing of the same name", () => {
    expect(placesComparingKind(POLICY_KINDS)).toEqual(OTHER_KINDS_OF_THE_SAME_NAME);
  });
});

/**
 * Today's comparisons with policies' names (issue 35): none is a policy's any more. choose's
 * snippets ask the definition (its wait shape's jitter form, its library name), and check's
 * formats its exact waits (exactWaits: fixed, geometric, AWS's jitters, a table), never its name.
 */
const OTHER_KINDS_OF_THE_SAME_NAME: readonly string[] = [
  // Not a policy: these compare a retry budget's kind (-budget grpc, gRPC's retryThrottling), whose name is the gRPC policy's too.
  "client/main.ts: grpc × 1",
  "model/client-instances.ts: grpc × 2",
  "recommend/snippets/shared.ts: grpc × 1", // intentOf's retry budget's kind (-budget grpc), not a policy's
  "strategies/protection.ts: grpc × 1", // -budget grpc too
];
