import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");

interface ProbeSummary {
  readonly provenance: { readonly commit: string };
  readonly picked: string;
  readonly output: readonly string[];
}

describe("the README's probe of a third-party server", () => {
  it("quotes docs/probe-gunicorn-summary.json: its steps, fits and picked model, and its commit", () => {
    const readme = readFileSync(resolve(ROOT, "README.md"), "utf8");
    const summary = JSON.parse(readFileSync(resolve(ROOT, "docs/probe-gunicorn-summary.json"), "utf8")) as ProbeSummary;
    const quoted = summary.output.filter((line) => /^(concurrency +\d+:|fit |picked |measured saturation)/.test(line));
    expect(quoted.length).toBeGreaterThanOrEqual(6);
    const block = /docs\/probe-gunicorn-summary\.json[\s\S]*?```text\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block?.trimEnd().split("\n")).toEqual(quoted);
    expect(readme).toContain(`commit \`${summary.provenance.commit.slice(0, 7)}\``);
  });
});
