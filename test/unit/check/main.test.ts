import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPatch } from "diff";
import { afterEach, describe, expect, it } from "vitest";
import { flagsFormat } from "../../helpers/flags-format.ts";
import { main } from "../../../src/check/main.ts";
import { main as probe } from "../../../src/probe/main.ts";
import type { ProgramIo } from "../../../src/runtime/program-io.ts";

/*
 * check's core on a format of our own flags (a JSON object of policies, each a map of flags), so
 * that the grade and the search for the smallest change are tested apart from any one system's
 * format: the real formats have tests of their own (test/unit/check/formats/).
 */

/** A small system (200 users at ~95 req/s, a 400 ms timeout) and a small grid: seconds of work. */
const SMALL = [
  ...["-clients", "200", "-lambda", "2", "-timeout", "400ms", "-interval", "1s"],
  ...["-steady", "5s", "-observe", "10s", "-everyday", "12s", "-outages", "2s,6s", "-max-outage", "12s", "-seeds", "1"],
  ...["-candidates", "exponential-backoff,full-jitter:max-attempts=3", "-rewrites", "2"],
];

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function check(config: string, args: readonly string[]) {
  const dir = mkdtempSync(join(tmpdir(), "thundering-herd-check-"));
  dirs.push(dir);
  const file = join(dir, "config.json");
  writeFileSync(file, config);
  let stdout = "";
  let stderr = "";
  const io: ProgramIo = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
  };
  // One worker thread: a second would only add its start-up to a unit test's small grid (the output does not depend on -parallel).
  const code = await main([file, ...args, "-parallel", "1", "-out", dir], io, { formats: [flagsFormat], probe });
  return { code, stdout, stderr, file };
}

describe("check", () => {
  // The time limit bounds a hung run (worker threads); it never measures speed.
  it(
    "grades a fixed retry as not qualifying and finds a change to the file that does, simulated as the file then reads",
    { timeout: 120_000 },
    async () => {
      const config = `{\n  "policies": {\n    "api": { "strategy": "fixed", "simple-backoff-delay": "100ms" }\n  }\n}\n`;
      const run = await check(config, [...SMALL, "-json"]);
      expect(run.code).toBe(0);
      const result = JSON.parse(run.stdout);
      const policy = result.policies[0];
      expect(policy.name).toBe("api");
      expect(policy.grade.qualifies).toBe(false);
      const smallest = policy.smallestChange;
      expect(smallest).not.toBeNull();
      expect(smallest.grade.qualifies).toBe(true);
      expect(smallest.diff).toContain(`--- ${run.file}`);
      // The diff is of the user's own file, and what it makes of the file is what was simulated.
      const changed = applyPatch(config, smallest.diff);
      expect(changed).not.toBe(false);
      expect(flagsFormat.read(changed as string).policies[0]!.settings).toEqual(smallest.settings);
      expect(policy.tried.length).toBeGreaterThan(1);
      // The report shows the user's policy beside the smallest change and choose's first, with their timelines, self-contained.
      const html = readFileSync(result.report, "utf8");
      for (const row of [
        "<td>your policy</td>",
        "<td>the smallest change that qualifies</td>",
        `<td>choose's first (${result.chooseFirst})</td>`,
      ]) {
        expect(html).toContain(row);
      }
      expect(html).toContain("<svg");
      expect(html).not.toMatch(/<script[^>]*\ssrc=|<link[^>]*\shref=/);
    },
  );

  it(
    "grades a chain with the policy at every layer, names the first tier to collapse, and finds the change that makes it qualify",
    { timeout: 120_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "thundering-herd-check-chain-"));
      dirs.push(dir);
      const scenario = join(dir, "chain.yaml");
      // The db serves 200 a second, three quarters used; after its 10 s stop, unlimited retries at both layers keep it down.
      writeFileSync(
        scenario,
        [
          "scenario: 1",
          "system: { clients: 150, lambda: 1, timeout: 1s }",
          "tiers:",
          "  - { name: edge, system: { model: queue, threads: 1024, service-time: 2ms }, upstream: { strategy: fixed, max-attempts: 3, timeout: 500ms } }",
          "  - { name: db, system: { model: queue, threads: 4, service-time: 20ms } }",
          "faults: [db:stop@10s+10s]",
          "run: { duration: 40s }",
          "",
        ].join("\n"),
      );
      const config = `{\n  "policies": {\n    "api": { "strategy": "fixed", "simple-backoff-delay": "100ms", "max-attempts": "0" }\n  }\n}\n`;
      const run = await check(config, [scenario, "-seeds", "1", "-rewrites", "1", "-json"]);
      expect(run.code).toBe(0);
      const policy = JSON.parse(run.stdout).policies[0];
      expect(policy.grade.qualifies).toBe(false);
      expect(policy.grade.firstCollapsed).toBe("edge");
      expect(policy.smallestChange.grade.qualifies).toBe(true);
      const changed = applyPatch(config, policy.smallestChange.diff) as string;
      expect(flagsFormat.read(changed).policies[0]!.settings).toEqual(policy.smallestChange.settings);
      // A policy the chain cannot run at every layer is refused in one line, not graded as nothing (it was a TypeError).
      const hedged = `{ "policies": { "api": { "strategy": "full-jitter", "hedge-delay": "50ms", "max-attempts": "3" } } }`;
      await expect(check(hedged, [scenario, "-seeds", "1"])).rejects.toThrow(
        /config\.json: api: the chain cannot run it at every layer: -hedge-delay replaces retry backoff/,
      );
    },
  );

  it(
    "gives each policy of a file its own changes and its own place among choose's candidates, two alike as one",
    { timeout: 120_000 },
    async () => {
      const policy = `{ "strategy": "fixed", "simple-backoff-delay": "100ms" }`;
      const config = `{\n  "policies": {\n    "a": ${policy},\n    "b": ${policy}\n  }\n}\n`;
      const run = await check(config, [...SMALL, "-json"]);
      const [a, b] = JSON.parse(run.stdout).policies as {
        grade: { rank: number; of: number };
        tried: unknown[];
        smallestChange: { diff: string };
      }[];
      expect(a!.grade).toEqual(b!.grade);
      expect(a!.tried.length).toBeGreaterThan(1);
      expect(b!.tried).toHaveLength(a!.tried.length);
      // Each change is made in its own policy's place in the file.
      expect(a!.smallestChange.diff).not.toEqual(b!.smallestChange.diff);
    },
  );

  it("grades on the system your load tests say, with -from, in one command", { timeout: 120_000 }, async () => {
    const config = `{ "policies": { "api": { "strategy": "fixed", "simple-backoff-delay": "100ms" } } }`;
    const measure = [
      "-clients",
      "200",
      "-steady",
      "5s",
      "-observe",
      "10s",
      "-everyday",
      "12s",
      "-outages",
      "2s",
      "-max-outage",
      "10s",
      "-seeds",
      "1",
    ];
    const run = await check(config, ["-from", "test/fixtures/load-tests/steps.csv", ...measure, "-candidates", "no-retries", "-json"]);
    expect(run.code).toBe(0);
    // probe -from's lines go to stderr, the answer alone to stdout; the scenario it wrote is the system graded on.
    expect(run.stderr).toContain("probe: test/fixtures/load-tests/steps.csv:");
    const result = JSON.parse(run.stdout) as { settings: { system: Record<string, string>; scenario: { text: string; file: string } } };
    expect(result.settings.system).toMatchObject({ model: "queue", threads: "4", "service-time": "20.8ms" });
    expect(result.settings.scenario.text).toContain("probe of load tests test/fixtures/load-tests/steps.csv");
    // The fitted scenario is kept beside the report, named, for ./sim and choose after.
    expect(existsSync(result.settings.scenario.file)).toBe(true);
    expect(result.settings.scenario.file).toMatch(/your-service-.*\.yaml$/);
    // A mistake in check's own flags is said before anything is fitted.
    await expect(check(config, ["-from", "test/fixtures/load-tests/steps.csv", "-bogus", "3"])).rejects.toThrow(/-bogus/);
    await expect(check(config, ["examples/check/orders-service.yaml", "-from", "test/fixtures/load-tests/steps.csv"])).rejects.toThrow(
      "-from gives your system from your load tests: give it or a scenario file, not both",
    );
  });

  it(
    "names choose's first among choose's own candidates, even when the user's policy ranks above them all",
    { timeout: 120_000 },
    async () => {
      const config = `{ "policies": { "api": { "strategy": "grpc", "min-delay": "1s", "max-delay": "2m0s", "backoff-factor": "1.6", "jitter": "0.2", "max-attempts": "3" } } }`;
      const run = await check(config, [
        ...SMALL.filter((arg, index, all) => arg !== "-candidates" && all[index - 1] !== "-candidates"),
        "-candidates",
        "no-retries",
        "-json",
      ]);
      const result = JSON.parse(run.stdout) as { chooseFirst: string; ranking: { id: string }[]; policies: { grade: { rank: number } }[] };
      expect(result.ranking[0]!.id).toBe("yours");
      expect(result.policies[0]!.grade.rank).toBe(1);
      expect(["no-retries", "fixed"]).toContain(result.chooseFirst);
    },
  );

  it("refuses bad input in one line with exit 2, before it simulates anything", async () => {
    const policy = `{ "policies": { "api": { "strategy": "fixed" } } }`;
    const cases: [string, readonly string[], RegExp][] = [
      [policy, ["-format", "nginx"], /^invalid value "nginx" for flag -format: no such format \(flags\)$/],
      ["retries: 3\n", [], /config\.json: not a retry configuration check reads \(flags as JSON \(test\)\); -format names one$/],
      ['{ "policies": 3 }', ["-format", "flags"], /config\.json: flags as JSON \(test\): policies: missing$/],
      ['{ "policies": {} }', [], /config\.json: flags as JSON \(test\): no retry policy in it$/],
      [policy, ["-policy", "web"], /^invalid value "web" for flag -policy: .*config\.json has 1 \(api\)$/],
      [
        `{ "policies": { "api": { "strategy": "fixed", "max-attempts": "-1" } } }`,
        [],
        /config\.json: api: the simulator cannot run it: .*max-attempts/,
      ],
      // The JSON parser recurses: 20 000 brackets ran it out of stack.
      [`{ "policies": ${"[".repeat(20_000)} }`, [], /config\.json: nested more than 64 levels deep; a retry configuration is not$/],
      // grpc-go and .NET read keys whatever their case: two spellings are one key given twice.
      [
        `{\n  "policies": { "a": { "strategy": "fixed" } },\n  "Policies": {}\n}\n`,
        [],
        /config\.json:3: "Policies" given twice in one object \(first at line 2 as "policies"\): give it once$/,
      ],
      // An apostrophe in a comment once hid the rest of the file from the count.
      [
        `/* the team's retries */ { "policies": ${"[".repeat(20_000)} }`,
        [],
        /config\.json: nested more than 64 levels deep; a retry configuration is not$/,
      ],
      // A reader keeps the last, an editor edits the first: a change written would not be read.
      [
        `{\n  "policies": { "a": { "strategy": "fixed" } },\n  "policies": {}\n}\n`,
        [],
        /config\.json:3: "policies" given twice in one object \(first at line 2\): give it once$/,
      ],
      [`{ "policies": {} }${" ".repeat(1024 * 1024)}`, [], /config\.json: larger than 1024 KiB; a retry configuration is a few KB$/],
    ];
    for (const [config, args, message] of cases) {
      const refused = check(config, args);
      await expect(refused, `${config.slice(0, 40)} ${args.join(" ")}`).rejects.toThrow(message);
      // One line and exit 2, as every program's usage and input errors end (src/runtime/run-program.ts).
      await expect(refused).rejects.toMatchObject({ exitCode: 2 });
    }
  });

  it("names its arguments when the configuration is missing, and prints its formats with -h", async () => {
    const io: ProgramIo = { stdout: { write: () => true }, stderr: { write: () => true }, env: {} };
    await expect(main(["-clients", "10"], io, { formats: [flagsFormat] })).rejects.toThrow(
      "name the configuration file first: check CONFIG [scenario.yaml] [flags]",
    );
    let help = "";
    const code = await main(["-h"], { ...io, stdout: { write: (text: string) => (help += text) } }, { formats: [flagsFormat] });
    expect(code).toBe(0);
    expect(help).toContain("check [flags] CONFIG [scenario.yaml]");
    expect(help).toContain("flags: flags as JSON (test)");
  });
});
