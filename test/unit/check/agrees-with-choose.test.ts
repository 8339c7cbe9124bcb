import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main as check } from "../../../src/check/main.ts";
import { main as choose } from "../../../src/choose/main.ts";
import type { ProgramIo } from "../../../src/runtime/program-io.ts";

/*
 * check grades as choose does (issue 38): choose's winner, written by choose's own snippet for a
 * system and read back by check, gets the very figures choose measured for it, on the same system
 * and seeds; and a configuration that does not qualify gets the mechanism choose's qualifying
 * first turns on.
 */

/** A small system (200 users at ~95 req/s, a 400 ms timeout) measured briefly: seconds of work. */
const SYSTEM = ["-clients", "200", "-lambda", "2", "-timeout", "400ms", "-interval", "1s"];
const MEASURE = [
  ...["-steady", "5s", "-observe", "10s", "-everyday", "12s", "-outages", "2s,6s", "-max-outage", "12s", "-seeds", "1"],
  // One worker thread: a second would only add its start-up to these small grids (the output does not depend on -parallel).
  ...["-parallel", "1"],
];

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function json(
  program: (argv: readonly string[], io: ProgramIo) => Promise<number>,
  args: readonly string[],
): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), "thundering-herd-agree-"));
  dirs.push(dir);
  let stdout = "";
  const io: ProgramIo = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => true }, env: {} };
  expect(await program([...args, "-json", "-out", dir], io)).toBe(0);
  return JSON.parse(stdout) as Record<string, unknown>;
}

function written(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "thundering-herd-agree-"));
  dirs.push(dir);
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

interface Figures {
  readonly everyday: { readonly sloSuccess: number; readonly retriedP99Ms?: number; readonly amplification: number };
  readonly longestSurvivedMs: number;
  readonly survivesAll: boolean;
}

describe("check agrees with choose", () => {
  // Time limits bound a hung run (worker threads); they never measure speed.
  it("gives choose's winner, read from choose's own gRPC snippet, the figures choose measured for it", { timeout: 180_000 }, async () => {
    const chosen = await json(choose, [
      ...SYSTEM,
      ...MEASURE,
      "-candidates",
      "grpc:max-attempts=3",
      "-client-only",
      "-stability-seeds",
      "0",
    ]);
    const ranking = chosen.ranking as (Figures & { id: string })[];
    expect(ranking[0]!.id).toBe("grpc:max-attempts=3");
    const snippet = (chosen.snippets as { id: string; text: string; notes: string[] }[]).find((entry) => entry.id === "grpc")!;
    // Said exactly: the snippet's notes are about what the system has no field for and the winner does not use (a
    // per-attempt timeout, which the scenario keeps; a budget it has none of).
    expect(snippet.notes).toHaveLength(2);
    const graded = await json(check, [
      written("service-config.json", snippet.text),
      ...SYSTEM,
      ...MEASURE,
      "-candidates",
      "grpc:max-attempts=3",
    ]);
    const grade = (
      graded.policies as {
        grade: { sloSuccess: number; retriedP99Ms: number; amplification: number; longestSurvivedMs: number; qualifies: boolean };
      }[]
    )[0]!.grade;
    const winner = ranking[0]!;
    expect(grade).toMatchObject({
      sloSuccess: winner.everyday.sloSuccess,
      retriedP99Ms: winner.everyday.retriedP99Ms,
      amplification: winner.everyday.amplification,
      longestSurvivedMs: winner.longestSurvivedMs,
      qualifies: winner.survivesAll,
    });
  });

  it(
    "gives a configuration that does not qualify choose's qualifying first, as the file says it, among the changes it tries",
    { timeout: 180_000 },
    async () => {
      const candidates = ["-candidates", "grpc:max-attempts=3"];
      const chosen = await json(choose, [...SYSTEM, ...MEASURE, ...candidates, "-client-only", "-stability-seeds", "0"]);
      const first = (chosen.ranking as (Figures & { id: string })[]).find((entry) => entry.survivesAll)!;
      expect(first.id).toBe("grpc:max-attempts=3");
      // Five attempts 10 ms apart: a storm after the 6 s outage.
      const config = JSON.stringify(
        {
          methodConfig: [
            {
              name: [{ service: "shop.Orders" }],
              retryPolicy: {
                maxAttempts: 5,
                initialBackoff: "0.01s",
                maxBackoff: "0.01s",
                backoffMultiplier: 1,
                retryableStatusCodes: ["UNAVAILABLE"],
              },
            },
          ],
        },
        null,
        2,
      );
      const graded = await json(check, [written("service-config.json", config), ...SYSTEM, ...MEASURE, ...candidates]);
      const policy = (
        graded.policies as {
          grade: { qualifies: boolean };
          smallestChange: { changedLines: number; grade: { qualifies: boolean } } | null;
          tried: { change: string; changedLines: number; qualifies: boolean; settings: Record<string, string> }[];
        }[]
      )[0]!;
      expect(policy.grade.qualifies).toBe(false);
      const rewritten = policy.tried.find((entry) => entry.change === "choose's grpc:max-attempts=3")!;
      expect(rewritten).toMatchObject({
        qualifies: true,
        settings: { strategy: "grpc", "min-delay": "1s", "max-delay": "2m0s", "backoff-factor": "1.6", jitter: "0.2", "max-attempts": "3" },
      });
      // The smallest change qualifies, and is no larger than choose's first written in.
      expect(policy.smallestChange?.grade.qualifies).toBe(true);
      expect(policy.smallestChange!.changedLines).toBeLessThanOrEqual(rewritten.changedLines);
    },
  );
});
