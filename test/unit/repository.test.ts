import { readdirSync, readFileSync, existsSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/*
 * The repository stands on its own: the backoff library imports nothing but itself and
 * pure-rand, no file points outside the repository, and every relative link in the docs
 * leads somewhere.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const SKIPPED = new Set(["node_modules", "dist", "results", "bench-results", ".git", "coverage"]);

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return [];
    const path = join(directory, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

const TEXT = /\.(ts|mjs|js|json|md|sh|yaml|yml|html|css)$|^(server|client|sim|run)$/;
const textFiles = filesUnder(ROOT).filter((path) => TEXT.test(path.split("/").pop()!) && statSync(path).size < 2_000_000);

describe("the backoff library", () => {
  const sources = filesUnder(join(ROOT, "src/backoff"));

  it("imports nothing from the rest of the project, and only pure-rand from outside", () => {
    const imports = sources.flatMap((path) =>
      [...readFileSync(path, "utf8").matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)].map((match) => ({ path, specifier: match[1]! })),
    );
    expect(imports.length).toBeGreaterThan(10);
    // A relative import may reach anywhere under src/backoff (its policies/ folder reads ../validate.ts), nowhere else.
    const library = join(ROOT, "src/backoff");
    const outside = imports.filter(({ path, specifier }) =>
      specifier.startsWith(".")
        ? relative(library, resolve(dirname(path), specifier)).startsWith("..")
        : specifier !== "pure-rand" && !specifier.startsWith("pure-rand/"),
    );
    expect(outside).toEqual([]);
  });
});

describe("the repository", () => {
  it("names no path outside itself", () => {
    // Spelled in pieces so that this file does not match itself.
    const outsidePaths = [["..", "shared"].join("/"), ["shared", "DESIGN"].join("/"), ["seeds", ""].join("/"), ["DESIGN", "md"].join(".")];
    const offenders = textFiles.flatMap((path) => {
      const text = readFileSync(path, "utf8");
      return outsidePaths.filter((pattern) => text.includes(pattern)).map((pattern) => `${relative(ROOT, path)}: ${pattern}`);
    });
    expect(offenders).toEqual([]);
  });

  it("has no broken relative link in its Markdown", () => {
    const markdown = textFiles.filter((path) => path.endsWith(".md"));
    expect(markdown.map((path) => relative(ROOT, path))).toContain("README.md");
    const broken = markdown.flatMap((path) => {
      const text = readFileSync(path, "utf8");
      const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g), ...text.matchAll(/src="([^"]+)"/g)].map((match) => match[1]!);
      return targets
        .filter((target) => !/^(https?:|mailto:|#)/.test(target))
        .filter((target) => !existsSync(resolve(dirname(path), decodeURIComponent(target.split("#")[0]!))))
        .map((target) => `${relative(ROOT, path)} -> ${target}`);
    });
    expect(broken).toEqual([]);
  });
});
