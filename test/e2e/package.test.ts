import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTogether } from "../helpers/run-together.ts";
import { REPO_ROOT, spawnCli } from "../helpers/spawn-cli.ts";

/*
 * The package as a user gets it: packed with `npm pack`, installed into an empty project,
 * used with plain node (no TypeScript loader), its bin run through npx, its types checked
 * by a consumer under both module resolutions people use.
 */

const work = mkdtempSync(join(tmpdir(), "thundering-herd-package-"));
const consumer = join(work, "consumer");
let tarball = "";

/** Runs a command to its end and returns its exit code and output. */
async function run(command: string, args: readonly string[], cwd: string) {
  const program = spawnCli(command, args, { command, cwd });
  const code = await program.exited;
  return { code, stdout: program.stdoutLines.join("\n"), stderr: program.stderrLines.join("\n") };
}

beforeAll(async () => {
  const packed = await run("npm", ["pack", "--pack-destination", work, "--silent"], REPO_ROOT);
  expect(packed.code, packed.stderr).toBe(0);
  tarball = join(
    work,
    readdirSync(work).find((name) => name.endsWith(".tgz"))!,
  );
  writeFileSync(join(work, "package.json"), "{}");
  rmSync(consumer, { recursive: true, force: true });
  const { mkdirSync } = await import("node:fs");
  mkdirSync(consumer);
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  const installed = await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], consumer);
  expect(installed.code, installed.stderr).toBe(0);
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the packed package", () => {
  // Each test uses the installed package in its own way (its own files, its own processes): side by side, the
  // checks and the programs share the two cores instead of taking turns with an idle one.
  const runs = runTogether({
    lint: async () => {
      const publint = await run(resolve(REPO_ROOT, "node_modules/.bin/publint"), ["run", tarball, "--strict"], work);
      expect(publint.code, publint.stdout + publint.stderr).toBe(0);
      const attw = await run(resolve(REPO_ROOT, "node_modules/.bin/attw"), [tarball, "--profile", "esm-only", "--format", "ascii"], work);
      expect(attw.code, attw.stdout + attw.stderr).toBe(0);
    },
    library: async () => {
      const script =
        'import { nextDelay, exponentialPolicy, constantPolicy, seededRandom, retry } from "thundering-herd/backoff";' +
        "const random = seededRandom(1);" +
        "const waits = [1, 2, 3].map((n) => nextDelay(exponentialPolicy({ jitter: 0 }), n, undefined, random));" +
        "let calls = 0;" +
        "const result = await retry(({ attempt }) => { calls = attempt; if (attempt < 3) throw new Error('no'); return 'ok'; }, constantPolicy({ delayMs: 0 }));" +
        "console.log(JSON.stringify({ waits, result, calls }));";
      const imported = await run(process.execPath, ["--input-type=module", "-e", script], consumer);
      expect(imported.code, imported.stderr).toBe(0);
      const f = 2.71828;
      const { waits, result, calls } = JSON.parse(imported.stdout) as { waits: number[]; result: string; calls: number };
      expect(waits.map((wait) => Number(wait.toFixed(6)))).toEqual(
        [100 * f, 100 * f ** 2, 100 * f ** 3].map((wait) => Number(wait.toFixed(6))),
      );
      expect([result, calls]).toEqual(["ok", 3]);
    },
    programs: async () => {
      const help = await run("npx", ["--no-install", "thundering-herd", "server", "-h"], consumer);
      // What npx ran; the rest runs it directly, without an npm start-up each.
      const bin = join(consumer, "node_modules/.bin/thundering-herd");
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/-limit n .*\(default: 30\)/);
      // With no program it prints the README's paths, each a command of its programs, on a file the package ships.
      const paths = await run(bin, [], consumer);
      expect(paths.code, paths.stderr).toBe(0);
      const commands = [...paths.stdout.matchAll(/^ {2}.{26}thundering-herd (\w+) (.*)$/gm)];
      expect(commands.map((match) => match[1])).toEqual(["demo", "probe", "probe", "choose", "check", "demo", "choose"]);
      expect(existsSync(join(consumer, /(node_modules\/thundering-herd\/\S+)$/.exec(commands.at(-1)![2]!)![1]!))).toBe(true);
      // The rest side by side: each is its own process, and their outputs are compared after.
      const simArgs = ["sim", "-clients", "50", "-duration", "20s", "-quiet", "-json"];
      const example = (name: string) => `node_modules/thundering-herd/examples/check/${name}`;
      const [bad, sim, choose, sequential, merge, check] = await Promise.all([
        run(bin, ["client", "-clients", "zero"], consumer),
        // Two strategies on two worker threads: the installed package finds its workers' entry in dist/.
        run(bin, [...simArgs, "-strategies", "fixed,exponential-backoff", "-parallel", "2"], consumer),
        // choose measures on worker threads that load the compiled worker module.
        run(
          bin,
          [
            ...["choose", "-clients", "50", "-everyday", "10s", "-steady", "5s", "-observe", "10s"],
            ...[
              "-outages",
              "2s",
              "-max-outage",
              "20s",
              "-seeds",
              "1",
              "-parallel",
              "2",
              "-candidates",
              "no-retries",
              "-json",
              "-out",
              work,
            ],
            ...["-client-only", "-stability-seeds", "0"],
          ],
          consumer,
        ),
        run(bin, [...simArgs, "-strategies", "fixed,exponential-backoff", "-parallel", "1"], consumer),
        run(bin, ["merge", "-h"], consumer),
        // check reads a shipped configuration with its formats from dist/, and grades it on choose's workers.
        run(
          bin,
          [
            ...["check", example("grpc-service-config.json"), example("orders-service.yaml"), "-candidates", "no-retries"],
            ...[
              "-everyday",
              "10s",
              "-steady",
              "5s",
              "-observe",
              "10s",
              "-outages",
              "2s",
              "-max-outage",
              "20s",
              "-seeds",
              "1",
              "-json",
              "-out",
              work,
            ],
          ],
          consumer,
        ),
      ]);
      expect(bad.code).toBe(2);
      expect(sim.code, sim.stderr).toBe(0);
      expect(sim.stdout).toContain('"summary"');
      expect(choose.code, choose.stderr).toBe(0);
      expect((JSON.parse(choose.stdout) as { ranking: { id: string }[] }).ranking.map((entry) => entry.id).sort()).toEqual([
        "fixed",
        "no-retries",
      ]);
      expect(sequential.stdout).toBe(sim.stdout);
      expect(merge.code, merge.stderr).toBe(0);
      expect(merge.stdout).toContain("Usage: merge [flags] file…");
      expect(check.code, check.stderr).toBe(0);
      const graded = JSON.parse(check.stdout) as { config: { format: string }; policies: { name: string; fields: unknown[] }[] };
      expect(graded.config.format).toBe("grpc");
      expect(graded.policies.map((policy) => policy.name)).toEqual(["methodConfig[0] (shop.Orders)"]);
    },
    dashboard: async () => {
      const sim = spawnCli(
        "npx",
        ["--no-install", "thundering-herd", "sim", "-clients", "50", "-duration", "5s", "-quiet", "-dashboard", "-speed", "100x"],
        { command: "npx", cwd: consumer },
      );
      const line = await sim.waitForLine(/^sim: dashboard on http:\/\/127\.0\.0\.1:\d+\/$/, { stream: "stderr", timeoutMs: 60_000 });
      const url = line.replace("sim: dashboard on ", "");
      expect(await (await fetch(url)).text()).toContain('<script src="uPlot.iife.min.js"></script>');
      expect(await (await fetch(new URL("uPlot.iife.min.js", url))).text()).toMatch(/^\/\*! https:\/\/github\.com\/leeoniya\/uPlot/);
      expect((await fetch(new URL("dashboard.js", url))).status).toBe(200);
      expect((await fetch(new URL("uPlot.min.css", url))).status).toBe(200);
    },
    types: async () => {
      writeFileSync(
        join(consumer, "consumer.ts"),
        [
          'import { type BackoffPolicy, nextDelay, fullJitterPolicy, seededRandom, retry, type RetryInfo } from "thundering-herd/backoff";',
          "const policy: BackoffPolicy = fullJitterPolicy({ baseMs: 50, capMs: 1000 });",
          "const wait: number | undefined = nextDelay(policy, 1, undefined, seededRandom(7));",
          "const log: RetryInfo[] = [];",
          "export const answer: Promise<string> = retry(async ({ attempt, signal }) => `${attempt} ${signal.aborted} ${wait}`, policy, {",
          "  onRetry: (info) => log.push(info),",
          "});",
          "// @ts-expect-error: a policy is data with a known kind",
          'nextDelay({ kind: "sometimes" }, 1, undefined, seededRandom(7));',
        ].join("\n"),
      );
      const resolutions = ["nodenext", "bundler"] as const;
      for (const resolution of resolutions) {
        writeFileSync(
          join(consumer, `tsconfig.${resolution}.json`),
          JSON.stringify({
            compilerOptions: {
              strict: true,
              noEmit: true,
              module: resolution === "nodenext" ? "nodenext" : "esnext",
              moduleResolution: resolution,
              target: "es2022",
              lib: ["es2022", "dom"],
              types: [],
              // TypeScript's own lib files (lib.dom.d.ts is large) are not the package's: its declarations are still checked.
              skipDefaultLibCheck: true,
            },
            files: ["consumer.ts"],
          }),
        );
      }
      // One compiler process checks both projects (-b), naming each before its errors (--verbose).
      const checked = await run(
        process.execPath,
        [
          resolve(REPO_ROOT, "node_modules/typescript/bin/tsc"),
          "-b",
          "--verbose",
          ...resolutions.map((resolution) => `tsconfig.${resolution}.json`),
        ],
        consumer,
      );
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);
      for (const resolution of resolutions)
        expect(checked.stdout).toContain(`Building project '${join(consumer, `tsconfig.${resolution}.json`)}'`);
    },
  });

  it("passes publint and arethetypeswrong (esm-only)", () => runs("lint"));

  it("serves the backoff library to plain node", () => runs("library"));

  it("runs its programs through npx and its installed bin, with the same flags as the root shims", () => runs("programs"));

  it("serves the live dashboard with its page and uPlot from the installed package", () => runs("dashboard"));

  it("type-checks a consumer under moduleResolution nodenext and bundler", () => runs("types"));
});
