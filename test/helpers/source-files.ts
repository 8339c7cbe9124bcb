import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";

/* src/'s files read as the house's rule tests read them (import rules, kind names, function length). */

export const SRC = resolve(import.meta.dirname, "../../src");

/** Every TypeScript and JavaScript file under a folder, by path. */
export function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

/** A file's text parsed by the compiler (TypeScript or, for the pages' scripts, JavaScript), named by `file`. */
export function parsedSource(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, /\.m?ts$/.test(file) ? ts.ScriptKind.TS : ts.ScriptKind.JS);
}

/** Every file under src/, parsed, named by its path below src/. */
export function srcSources(): { readonly file: string; readonly text: string }[] {
  return sourceFiles(SRC).map((path) => ({ file: relative(SRC, path), text: readFileSync(path, "utf8") }));
}
