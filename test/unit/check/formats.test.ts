import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_FORMATS, formatOf } from "../../../src/check/formats.ts";

const FIXTURES = "test/fixtures/configs";

describe("check's formats", () => {
  // Each format's folder; README.md beside them says where the docs-* fixtures come from.
  const folders = readdirSync(FIXTURES, { withFileTypes: true }).filter((entry) => entry.isDirectory());
  const fixtures = folders.flatMap(({ name: folder }) =>
    readdirSync(join(FIXTURES, folder)).map((file) => ({ folder, file: join(FIXTURES, folder, file) })),
  );

  it("has a folder of fixtures for every format, and a format for every folder", () => {
    expect([...new Set(fixtures.map((fixture) => fixture.folder))].sort()).toEqual(CONFIG_FORMATS.map((format) => format.name).sort());
  });

  it.each(fixtures)("tells $file for its own format, and no other format takes it for its own", ({ folder, file }) => {
    const text = readFileSync(file, "utf8");
    expect(formatOf(file, text, undefined).name).toBe(folder);
    expect(CONFIG_FORMATS.filter((format) => format.recognizes(text)).map((format) => format.name)).toEqual([folder]);
  });

  it("has a section of docs/check.md for every format, headed with its -format name", () => {
    const page = readFileSync("docs/check.md", "utf8");
    const headed = [...page.matchAll(/^### .* \(`([\w-]+)`\)$/gm)].map((match) => match[1]);
    expect(headed.sort()).toEqual(CONFIG_FORMATS.map((format) => format.name).sort());
  });

  it("names every format once, with its documentation", () => {
    expect(new Set(CONFIG_FORMATS.map((format) => format.name)).size).toBe(CONFIG_FORMATS.length);
    for (const format of CONFIG_FORMATS) expect(format.source).toMatch(/https:\/\//);
  });
});
