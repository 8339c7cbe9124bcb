import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exampleArgs, readExampleFile } from "../../../scripts/scenario-shim.ts";
import { temporaryDir } from "../../helpers/temporary-dirs.ts";

const EXAMPLE = [
  "scenario: 1",
  "name: n",
  "source: { title: t, url: https://example.org }",
  "published: p",
  "system: { model: linear, rate: 40 }",
  "strategy: { strategy: fixed, max-attempts: 3 }",
  "faults: [stop@15s+20s, spike@60s+5s*2]",
  "run: { strategies: [fixed, full-jitter], quiet: true }",
].join("\n");

function write(text: string): string {
  const file = join(temporaryDir(), "example.yaml");
  writeFileSync(file, text);
  return file;
}

describe("the stand-in scenario reader of the examples", () => {
  it("turns the sections into flags, lists into comma-separated values, and lets an override win or remove a flag", () => {
    const example = readExampleFile(write(EXAMPLE));
    expect(example.flags).toEqual({
      model: "linear",
      rate: "40",
      strategy: "fixed",
      "max-attempts": "3",
      strategies: "fixed,full-jitter",
      quiet: "true",
      faults: "stop@15s+20s,spike@60s+5s*2",
    });
    expect(exampleArgs(example, { rate: "80", quiet: null })).toEqual([
      "-model=linear",
      "-rate=80",
      "-strategy=fixed",
      "-max-attempts=3",
      "-strategies=fixed,full-jitter",
      "-faults=stop@15s+20s,spike@60s+5s*2",
    ]);
  });

  it("refuses a file without its version, its source or an unknown key", () => {
    expect(() => readExampleFile(write(EXAMPLE.replace("scenario: 1", "scenario: 2")))).toThrow(/scenario: must be 1/);
    expect(() => readExampleFile(write(EXAMPLE.replace("source: { title: t, url: https://example.org }", "")))).toThrow(/source:/);
    expect(() => readExampleFile(write(`${EXAMPLE}\nextra: 1`))).toThrow(/extra: unknown key/);
  });
});
