import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { describeFailure, UsageError } from "../../../src/cli/usage-error.ts";
import { clientNotStartedLine, clientSummaryLine, clientWindowLine } from "../../../src/contracts/client-line-writer.ts";
import { parseClientLine } from "../../../src/contracts/client-line.ts";
import { main } from "../../../src/merge/main.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";
import { capturedIo } from "../../helpers/captured-io.ts";
import { FUZZ } from "../../helpers/fuzz.ts";
import { temporaryDir } from "../../helpers/temporary-dirs.ts";

/*
 * A fuzz of merge's reader (issue 39): clients' -json outputs, valid ones mutated (fields
 * removed, wrong types, huge numbers, NaN-ish strings, random shard labels, random bytes),
 * several files. Whatever they hold, merge prints its normal output (exit 0) or refuses them
 * in one printable line (exit 2): never an unexpected error, never Infinity or NaN.
 * FUZZ_RUNS and FUZZ_SEED (test/helpers/fuzz.ts) change the number of cases and the seed.
 */
const { numRuns: RUNS, seed: SEED } = FUZZ;

const START = Date.UTC(2025, 5, 21, 12, 0, 0);
const NOT_BEHIND = { eventLoopDelay: undefined, behind: undefined };

interface ClientRun {
  readonly oks: readonly number[];
  readonly latencyMs: number;
  readonly failures: number;
  readonly summary: boolean;
  readonly notStarted: boolean;
}

/** One client's -json lines, as the client writes them. */
function clientLines(run: ClientRun, shard: string | undefined): string[] {
  if (run.notStarted) return [JSON.stringify(clientNotStartedLine("SIGINT"))];
  const stats = new WindowStats(0);
  const lines = run.oks.map((oks, index) => {
    for (let ok = 0; ok < oks; ok++) {
      stats.attemptStarted(false, index);
      stats.attemptEnded({ outcome: "ok" }, run.latencyMs + ok);
    }
    for (let failure = 0; failure < run.failures; failure++) {
      stats.attemptStarted(true);
      stats.attemptEnded({ outcome: "error", errorKind: "reset" }, 3);
    }
    const gridEpochMs = START + (index + 1) * 1_000;
    const line = clientWindowLine(stats.closeWindow((index + 1) * 1_000), index, gridEpochMs + 2, { gridEpochMs, shard }, NOT_BEHIND);
    return JSON.stringify(line);
  });
  if (run.summary) {
    const totals = stats.totals(run.oks.length * 1_000);
    lines.push(JSON.stringify(clientSummaryLine(totals, "duration", START + run.oks.length * 1_000 + 9, shard, 0)));
  }
  return lines;
}

const shardLabel = fc.oneof(
  fc.tuple(fc.nat({ max: 5 }), fc.integer({ min: 1, max: 5 })).map(([index, count]) => `${index}/${count}`),
  fc.tuple(fc.nat(), fc.nat()).map(([index, count]) => `${index}/${count}`),
  fc.constantFrom("x/y", "0/0", "0/1000000", "999999/1000000", "0/1000001", "0/1000000000", "-1/2", " 0/2", "1/2\n", "0/2/3", "1e3/2000"),
  fc.string({ maxLength: 8 }),
);

/** Values a hostile line puts in a field. */
const hostileValue = fc.oneof(
  fc.constantFrom(
    null,
    true,
    "",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    0,
    -1,
    -0,
    0.5,
    5e-324,
    1e308,
    -1e308,
    2 ** 53,
    2 ** 53 + 2,
    8.64e15,
    8.64e15 + 1,
  ),
  fc.double(),
  fc.integer(),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.constantFrom("two\nlines", "OK: 1 req\u001b[31m", "\u0000", "\u007f", "\ud800", "tab\there"),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.integer(), fc.string({ maxLength: 4 })), { maxKeys: 3 }),
  fc.array(fc.integer(), { maxLength: 3 }),
  shardLabel,
);

/** Numbers JSON.stringify cannot write but a file can hold (JSON.parse reads 1e999 as Infinity). */
const RAW_NUMBERS = ["1e999", "-1e999", "1e308", "-0", "0.0000001", "123456789012345678901234567890"];

const FIELDS = [
  "time",
  "epochMs",
  "windowMs",
  "ok",
  "errors",
  "attempts",
  "retries",
  "okPerSec",
  "retryShare",
  "inFlight",
  "errorKinds",
  "latencyMs",
  "notSent",
  "lateness",
  "eventLoopDelayMs",
  "behind",
  "behindReason",
  "gridEpochMs",
  "shard",
  "latencyHistogram",
  "latenessHistogram",
  "partial",
  "summary",
  "reason",
  "started",
] as const;
const NESTED = ["latencyMs", "lateness", "eventLoopDelayMs", "errorKinds"] as const;
const INNER = ["p50", "p99", "max", "reset", "refused", "constructor", "__proto__", "new\nline", "bell\u0007"] as const;

type Mutation =
  | { readonly kind: "drop"; readonly field: string }
  | { readonly kind: "set"; readonly field: string; readonly value: unknown }
  | { readonly kind: "set-inner"; readonly field: string; readonly inner: string; readonly value: unknown }
  | { readonly kind: "raw-number"; readonly field: string; readonly text: string }
  | { readonly kind: "truncate"; readonly at: number }
  | { readonly kind: "behind"; readonly reason: unknown }
  | { readonly kind: "replace-line"; readonly text: string };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("drop" as const), field: fc.constantFrom(...FIELDS) }),
  fc.record({ kind: fc.constant("set" as const), field: fc.constantFrom(...FIELDS), value: hostileValue }),
  fc.record({
    kind: fc.constant("set-inner" as const),
    field: fc.constantFrom(...NESTED),
    inner: fc.oneof(fc.constantFrom(...INNER), fc.string({ maxLength: 6 })),
    value: hostileValue,
  }),
  fc.record({ kind: fc.constant("raw-number" as const), field: fc.constantFrom(...FIELDS), text: fc.constantFrom(...RAW_NUMBERS) }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat({ max: 2_000 }) }),
  fc.record({ kind: fc.constant("behind" as const), reason: hostileValue }),
  fc.record({
    kind: fc.constant("replace-line" as const),
    text: fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
      fc.constantFrom("{", "{}", "[]", "null", '{"summary":true}', '{"summary":true,"started":false}', "\u0000{"),
    ),
  }),
);

function mutate(line: string, change: Mutation): string {
  if (change.kind === "truncate") return line.slice(0, change.at);
  if (change.kind === "replace-line") return change.text;
  let object: Record<string, unknown>;
  try {
    object = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line; // mutated already beyond JSON
  }
  if (typeof object !== "object" || object === null) return line;
  if (change.kind === "drop") {
    delete object[change.field];
    return JSON.stringify(object);
  }
  if (change.kind === "set") return JSON.stringify({ ...object, [change.field]: change.value });
  if (change.kind === "behind") return JSON.stringify({ ...object, behind: true, behindReason: change.reason });
  if (change.kind === "set-inner") {
    const inner = typeof object[change.field] === "object" && object[change.field] !== null ? object[change.field] : {};
    return JSON.stringify({ ...object, [change.field]: { ...(inner as object), [change.inner]: change.value } });
  }
  // A number written into the text, where JSON.stringify would have written null.
  return JSON.stringify({ ...object, [change.field]: "RAW" }).replace('"RAW"', change.text);
}

const clientRun: fc.Arbitrary<ClientRun> = fc.record({
  oks: fc.array(fc.nat({ max: 20 }), { minLength: 1, maxLength: 4 }),
  latencyMs: fc.double({ min: 0.001, max: 5_000, noNaN: true }),
  failures: fc.nat({ max: 3 }),
  summary: fc.boolean(),
  notStarted: fc.nat({ max: 9 }).map((draw) => draw === 0),
});

/** Mutations of a file, at random lines: none for about half the files. */
const mutations = fc.oneof(fc.constant([]), fc.array(fc.tuple(fc.nat(), mutation), { minLength: 1, maxLength: 3 }));

/** A file: a client's lines, its shard's label when `shard` is given, mutated, and now and then after a start-up line. */
function fileText(
  run: ClientRun,
  shard: string | undefined,
  changes: readonly (readonly [number, Mutation])[],
  startUpLine: boolean,
): string {
  const lines = clientLines(run, shard);
  for (const [at, change] of changes) lines[at % lines.length] = mutate(lines[at % lines.length]!, change);
  return `${startUpLine ? "client: 10 clients\n" : ""}${lines.join("\n")}\n`;
}

/** The files of one merge: shards i/n of one split (or no labels), each mutated or not. */
const files = fc
  .tuple(fc.array(fc.tuple(clientRun, mutations, fc.boolean()), { minLength: 1, maxLength: 4 }), fc.boolean())
  .map(([runs, sharded]) =>
    runs.map(([run, changes, startUpLine], index) => fileText(run, sharded ? `${index}/${runs.length}` : undefined, changes, startUpLine)),
  );

const flags = fc.record({
  json: fc.boolean(),
  phases: fc.option(fc.tuple(fc.integer({ min: -5_000, max: 10_000 }), fc.nat({ max: 5_000 })), { nil: undefined }),
});

/**
 * merge's -json output is a client's -json output again, every figure a finite number (one
 * that was not would have been written null), and its metrics line's figures are finite too.
 */
function expectClientLines(output: string): void {
  for (const [index, line] of output.trim().split("\n").entries()) {
    const object = JSON.parse(line) as { metrics?: Record<string, unknown> };
    if (object.metrics === undefined) {
      parseClientLine(line, { file: "merge's output", line: index + 1 });
      continue;
    }
    for (const figure of ["baselineOkPerSec", "outageAmplification", "peakAmplification"]) {
      expect(Number.isFinite(object.metrics[figure]), figure).toBe(true);
    }
  }
}

/** `output` without the reasons the inputs gave for falling behind: a client's own text, which merge quotes, not a figure. */
function withoutReasons(output: string, inputs: readonly string[]): string {
  const reasons = inputs.flatMap((text) =>
    text.split("\n").flatMap((line) => {
      try {
        const reason = (JSON.parse(line) as { behindReason?: unknown }).behindReason;
        return typeof reason === "string" && reason !== "" ? [reason] : [];
      } catch {
        return [];
      }
    }),
  );
  return reasons.reduce((text, reason) => text.replaceAll(reason, ""), output);
}

/** Printable: no control character but the newline that ends each line, no lone surrogate. */
const PRINTABLE = /^[^\p{Cc}\p{Cs}]*$/u;

describe("merge's reader, fuzzed", () => {
  it(`prints its normal output or refuses in one printable line, on ${RUNS} hostile cases (seed ${SEED})`, { timeout: 600_000 }, () => {
    const dir = temporaryDir("merge-fuzz-");
    fc.assert(
      fc.property(files, flags, (texts, { json, phases }) => {
        const paths = texts.map((text, index) => {
          const path = join(dir, `${index}.log`);
          writeFileSync(path, text);
          return path;
        });
        const argv = [
          ...(json ? ["-json"] : []),
          ...(phases === undefined ? [] : ["-stop-at", String(START + phases[0]), "-resume-at", String(START + phases[0] + phases[1])]),
          ...paths,
        ];
        const { io, stdout, stderr } = capturedIo();
        let code: number;
        try {
          code = main(argv, io);
        } catch (error) {
          if (!(error instanceof UsageError)) throw error;
          const { text, exitCode } = describeFailure("merge", error);
          expect(exitCode).toBe(2);
          const [line, hint, ...rest] = text.split("\n");
          expect([hint, rest]).toEqual(["Run 'merge -h' for usage.", [""]]);
          expect(line).toMatch(PRINTABLE);
          return;
        }
        expect(code).toBe(0);
        for (const line of `${stdout()}${stderr()}`.split("\n")) expect(line).toMatch(PRINTABLE);
        if (json) expectClientLines(stdout());
        else expect(withoutReasons(stdout(), texts)).not.toMatch(/Infinity|NaN|\+Inf/);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
