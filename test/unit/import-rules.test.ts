import { readdirSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { sourceFiles, SRC } from "../helpers/source-files.ts";

/*
 * The import rules of docs/design.md ("Layers"), checked on every import under src/: which
 * folder may import which, and no circle between files. Imports are read with the
 * TypeScript compiler's own pre-processor (static, type-only, dynamic and re-exports alike).
 */

/** What each folder may import besides itself: the layers of docs/design.md, lowest first. */
const FOUNDATION = ["backoff", "clock", "cli"];
const PURE = [...FOUNDATION, "model"];
const SHARED = [...PURE, "strategies", "contracts", "report"];
const BELOW_OPTIONS = [...SHARED, "config", "runtime", "dashboard", "runner"];
const BELOW_PROGRAMS = [...BELOW_OPTIONS, "options", "scenario-file", "recommend"];
const PROGRAMS = ["server", "client", "sim", "demo", "choose", "merge", "probe", "check"];
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  backoff: [],
  clock: [],
  cli: [],
  model: ["backoff", "clock", "cli"],
  strategies: [...PURE],
  contracts: [...PURE],
  report: [...PURE],
  // The configuration: what the flags describe (the load, the server itself), as typed values every program reads.
  config: [...SHARED],
  runtime: [...SHARED, "config"],
  dashboard: [...SHARED, "config", "runtime"],
  // The runner runs scenarios and shows none: starting the live view is a program's part.
  runner: [...SHARED, "config", "runtime"],
  // Every program's command line: read by the program, by the scenario files and by the demo, which starts ./server and ./client.
  options: BELOW_OPTIONS,
  "scenario-file": [...BELOW_OPTIONS, "options"],
  // What choose and check share: candidates measured, ranked and written in other systems' words.
  recommend: [...BELOW_OPTIONS, "options", "scenario-file"],
  // Siblings: no program imports another.
  ...Object.fromEntries(PROGRAMS.map((program) => [program, BELOW_PROGRAMS])),
  bin: [...BELOW_PROGRAMS, ...PROGRAMS],
};

/** An import the layers forbid that docs/design.md allows, and why; each must be in use. */
interface Exception {
  readonly from: RegExp;
  readonly to: RegExp;
  readonly why: string;
}

/** None today: the worker threads' entry, which names each program's worker module, is an entry in src/bin. */
const EXCEPTIONS: readonly Exception[] = [];

/** Why an import from one file to another breaks the rules; undefined when it does not. */
function violation(from: string, to: string, exceptions: readonly Exception[] = EXCEPTIONS): string | undefined {
  const [fromFolder, ...fromRest] = from.split("/");
  const [toFolder] = to.split("/");
  if (fromFolder === toFolder) return undefined;
  if (fromFolder === undefined || toFolder === undefined || fromRest.length === 0) return `${from} sits directly in src/`;
  const allowed = ALLOWED[fromFolder];
  if (allowed === undefined) return `src/${fromFolder} is in no layer of docs/design.md`;
  if (allowed.includes(toFolder)) return undefined;
  if (exceptions.some((exception) => exception.from.test(from) && exception.to.test(to))) return undefined;
  return `src/${fromFolder} may not import src/${toFolder}`;
}

/** Every relative import of every file, as paths relative to src/. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(path, "utf8"), true, true);
    const targets = importedFiles
      .map((imported) => imported.fileName)
      .filter((specifier) => specifier.startsWith("."))
      .map((specifier) => relative(SRC, resolve(dirname(path), specifier)));
    graph.set(relative(SRC, path), targets);
  }
  return graph;
}

/** The circles of the graph: each strongly connected set of more than one file, or a file importing itself (Tarjan). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** Each file's loaded modules, read once: several tests walk the same files. */
const loadedCache = new Map<string, string[]>();

/** The modules a file loads when it runs: its imports less those of types only (erased), dynamic ones included. */
function loadedModules(path: string, dynamic = true): string[] {
  const key = `${dynamic}:${path}`;
  const known = loadedCache.get(key);
  if (known !== undefined) return known;
  const text = readFileSync(path, "utf8");
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest);
  const loaded: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      const typesOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            bindings !== undefined &&
            ts.isNamedImports(bindings) &&
            bindings.elements.length > 0 &&
            bindings.elements.every((element) => element.isTypeOnly)));
      if (!typesOnly) loaded.push(statement.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined && !statement.isTypeOnly) {
      loaded.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  const visit = (node: ts.Node): void => {
    if (dynamic && ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [specifier] = node.arguments;
      if (specifier !== undefined && ts.isStringLiteral(specifier)) loaded.push(specifier.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  loadedCache.set(key, loaded);
  return loaded;
}

/** Every package a program loads, following its files' value imports from `entry` (relative to src/); without `dynamic`, at start-up. */
function packagesLoadedBy(entry: string, dynamic = true): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const pending = [resolve(SRC, entry)];
  while (pending.length > 0) {
    const path = pending.pop()!;
    if (seen.has(path)) continue;
    seen.add(path);
    for (const specifier of loadedModules(path, dynamic)) {
      if (specifier.startsWith(".")) pending.push(resolve(dirname(path), specifier));
      else packages.add(specifier);
    }
  }
  return packages;
}

describe("the import rules of docs/design.md", () => {
  const graph = importGraph();

  it("reads the imports of every source file", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get("model/herd.ts")).toContain("model/attempt.ts");
    // Dynamic imports count too.
    expect(graph.get("bin/worker-entry.ts")).toContain("sim/sim-worker.ts");
  });

  it("has every folder of src/ in a layer", () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.filter((folder) => ALLOWED[folder] === undefined)).toEqual([]);
  });

  it("has no import the layers forbid", () => {
    const offenders = [...graph].flatMap(([from, targets]) =>
      targets.flatMap((to) => {
        const why = violation(from, to);
        return why === undefined ? [] : [`${from} -> ${to}: ${why}`];
      }),
    );
    expect(offenders).toEqual([]);
  });

  it("keeps the pure model free of I/O: model, backoff and clock import no node: module", () => {
    const offenders = sourceFiles(SRC)
      .filter((path) => /^(model|backoff|clock)\//.test(relative(SRC, path)))
      .flatMap((path) =>
        ts
          .preProcessFile(readFileSync(path, "utf8"), true, true)
          .importedFiles.filter((imported) => imported.fileName.startsWith("node:"))
          .map((imported) => `${relative(SRC, path)} -> ${imported.fileName}`),
      );
    expect(offenders).toEqual([]);
  });

  it("keeps the schema validator out of the programs that only write lines (its many files at start-up would not fit 64 descriptors)", () => {
    // The readers load it: the test would pass vacuously if the walk did not reach them.
    expect(packagesLoadedBy("bin/merge.ts")).toContain("zod");
    for (const entry of ["bin/server.ts", "bin/client.ts", "bin/worker-entry.ts"])
      expect(packagesLoadedBy(entry), entry).not.toContain("zod");
  });

  it("loads the scenario files' YAML parser only when a program is given a file", () => {
    for (const entry of ["bin/sim.ts", "bin/demo.ts", "bin/choose.ts"]) {
      expect(packagesLoadedBy(entry), entry).toContain("yaml");
      expect(packagesLoadedBy(entry, false), entry).not.toContain("yaml");
    }
    // The simulator loads no validator either until it reads a file.
    expect(packagesLoadedBy("bin/sim.ts", false)).not.toContain("zod");
  });

  it("keeps no exception that no import needs", () => {
    const imports = [...graph].flatMap(([from, targets]) => targets.map((to) => ({ from, to })));
    const needed = (exception: Exception) =>
      imports.some(({ from, to }) => exception.from.test(from) && exception.to.test(to) && violation(from, to, []) !== undefined);
    expect(EXCEPTIONS.filter((exception) => !needed(exception)).map((exception) => exception.why)).toEqual([]);
  });

  it("has no circle of imports", () => {
    expect(circles(graph)).toEqual([]);
  });

  it("would catch a forbidden import and a circle", () => {
    expect(violation("model/herd.ts", "report/report.ts")).toBe("src/model may not import src/report");
    expect(violation("demo/main.ts", "sim/trial.ts")).toBe("src/demo may not import src/sim");
    // Programs are siblings: the demo reads the command lines of the programs it starts from src/options, not from them.
    expect(violation("demo/main.ts", "client/herd.ts")).toBe("src/demo may not import src/client");
    expect(violation("demo/main.ts", "options/client.ts")).toBeUndefined();
    // The command lines are below the scenario files and every program: they import neither.
    expect(violation("options/sim.ts", "scenario-file/read.ts")).toBe("src/options may not import src/scenario-file");
    expect(violation("options/demo.ts", "sim/trial.ts")).toBe("src/options may not import src/sim");
    // The runner is below every program: it imports none.
    expect(violation("runner/simulate.ts", "options/sim.ts")).toBe("src/runner may not import src/options");
    expect(violation("choose/measure.ts", "sim/trial.ts")).toBe("src/choose may not import src/sim");
    expect(
      circles(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", ["c.ts"]],
          ["c.ts", ["a.ts"]],
          ["d.ts", ["a.ts"]],
        ]),
      ),
    ).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });
});
