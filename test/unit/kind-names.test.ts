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
 * - Fault kinds (src/model/faults/kinds/<kind>.ts): none anywhere else.
 * - Server models and backoff policies are not yet one definition each (issue 35): every place
 *   that still compares a `.kind` with their names is listed below, exactly, so that no new one
 *   can appear unnoticed and the list shrinks as they move into their definitions.
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

/** `file: name × count`, sorted, for the places compared with one of `names` on a `.kind` (or `kind`). */
function placesComparingKind(names: readonly string[], home: (file: string, name: string) => boolean): string[] {
  const counts = new Map<string, number>();
  for (const { file, name, subject } of ALL) {
    if (!names.includes(name) || home(file, name) || !/(^|\.)kind$/.test(subject)) continue;
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

  it("lists every place still comparing a server model's or a backoff policy's kind by name, and no more", () => {
    const names = [...new Set<string>([...SERVER_MODEL_KINDS, ...POLICY_KINDS])];
    expect(placesComparingKind(names, () => false)).toEqual(NOT_YET_ONE_DEFINITION);
  });
});

/** Today's comparisons on server models' and policies' names (issue 35): each moves into its kind's definition. */
const NOT_YET_ONE_DEFINITION: readonly string[] = [
  "backoff/delay.ts: constant × 1",
  "backoff/delay.ts: decorrelated-jitter × 1",
  "backoff/delay.ts: equal-jitter × 1",
  "backoff/delay.ts: exponential × 1",
  "backoff/delay.ts: full-jitter × 1",
  "backoff/delay.ts: google × 1",
  "backoff/delay.ts: grpc × 1",
  "backoff/delay.ts: reference × 1",
  "backoff/delay.ts: table × 2",
  "backoff/policy.ts: constant × 1",
  "backoff/policy.ts: decorrelated-jitter × 1",
  "backoff/policy.ts: equal-jitter × 1",
  "backoff/policy.ts: exponential × 1",
  "backoff/policy.ts: full-jitter × 1",
  "backoff/policy.ts: google × 1",
  "backoff/policy.ts: grpc × 1",
  "backoff/policy.ts: reference × 1",
  "backoff/policy.ts: table × 1",
  "choose/candidates.ts: exponential × 1",
  "choose/candidates.ts: queue × 1",
  "choose/snippets.ts: constant × 3",
  "choose/snippets.ts: decorrelated-jitter × 4",
  "choose/snippets.ts: equal-jitter × 3",
  "choose/snippets.ts: exponential × 3",
  "choose/snippets.ts: full-jitter × 4",
  "choose/snippets.ts: google × 2",
  "choose/snippets.ts: grpc × 4",
  "choose/snippets.ts: reference × 4",
  "choose/snippets.ts: table × 2",
  "client/main.ts: grpc × 1",
  "model/client-instances.ts: grpc × 2",
  "model/client-loop.ts: reference × 1",
  "model/faults/conditions.ts: linear × 1",
  "model/latency.ts: linear × 2",
  "model/open-loop.ts: reference × 1",
  "model/servers/models.ts: exponential × 1",
  "model/servers/models.ts: linear × 1",
  "model/servers/models.ts: queue × 2",
  "model/upstream-calls.ts: reference × 1",
  "probe/fit/closed-loop-curve.ts: exponential × 1",
  "probe/fit/closed-loop-curve.ts: linear × 1",
  "probe/fit/closed-loop-curve.ts: queue × 1",
  "probe/fit/fit-models.ts: exponential × 1",
  "probe/fit/fit-models.ts: linear × 1",
  "probe/fit/fit-models.ts: queue × 1",
  "probe/model-settings.ts: exponential × 1",
  "probe/model-settings.ts: linear × 1",
  "probe/model-settings.ts: queue × 1",
  "server/http-server.ts: queue × 1",
  "server/model-flags.ts: exponential × 2",
  "server/model-flags.ts: linear × 2",
  "server/model-flags.ts: queue × 3",
  "server/upstream-flags.ts: queue × 1",
  "sim/chain-options.ts: queue × 1",
  "sim/chain.ts: queue × 1",
  "sim/main.ts: exponential × 1",
  "sim/simulate.ts: constant × 1",
  "strategies/protection.ts: grpc × 1",
];
