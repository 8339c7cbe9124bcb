import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { formatClientLine, formatClientSummary } from "../../../src/contracts/client-text.ts";
import { clientSummaryLine, clientWindowLine } from "../../../src/contracts/client-line-writer.ts";
import { serverLine } from "../../../src/contracts/server-line-writer.ts";
import { parseClientLog } from "../../../src/merge/client-log.ts";
import { main } from "../../../src/merge/main.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { mergeClientLogs } from "../../../src/merge/merge-logs.ts";
import { mergeWindowReports } from "../../../src/model/window-merge.ts";
import { type WindowReport, WindowStats } from "../../../src/model/window-stats.ts";
import { IDLE_SERVER } from "../../helpers/server-fixtures.ts";
import { capturedIo } from "../../helpers/captured-io.ts";
import { temporaryDir } from "../../helpers/temporary-dirs.ts";

const START = Date.UTC(2025, 5, 21, 12, 0, 0);
const NOT_BEHIND = { eventLoopDelay: undefined, behind: undefined };

/** One shard's -json output: `windows` windows of 1 s from START with the given OK latencies, then a summary. */
function shardOutput(options: {
  shard?: string;
  windows: number;
  oks: number[];
  latencyMs: number;
  failures?: number;
  offsetMs?: number;
  /** Windows (by index) in which this shard fell behind, with the lateness it records there. */
  behind?: Record<number, number>;
}) {
  const stats = new WindowStats(0);
  const lines: string[] = [];
  const reports: WindowReport[] = [];
  const offset = options.offsetMs ?? 0;
  for (let index = 0; index < options.windows; index++) {
    for (let ok = 0; ok < options.oks[index]!; ok++) {
      stats.attemptStarted(false, options.behind?.[index] ?? 0);
      stats.attemptEnded({ outcome: "ok" }, options.latencyMs + ok);
    }
    for (let failure = 0; failure < (options.failures ?? 0); failure++) {
      stats.attemptStarted(true);
      stats.attemptEnded({ outcome: "timedout" }, 2_000);
    }
    const report = stats.closeWindow((index + 1) * 1_000);
    reports.push(report);
    const epochMs = START + offset + (index + 1) * 1_000 + 3;
    lines.push(
      JSON.stringify(
        clientWindowLine(
          report,
          index,
          epochMs,
          { gridEpochMs: START + offset + (index + 1) * 1_000, shard: options.shard },
          options.behind?.[index] === undefined
            ? NOT_BEHIND
            : { eventLoopDelay: undefined, behind: `lateness p99 ${options.behind[index]} ms` },
        ),
      ),
    );
  }
  const totals = stats.totals(options.windows * 1_000);
  lines.push(JSON.stringify(clientSummaryLine(totals, "duration", START + offset + options.windows * 1_000 + 9, options.shard, 0)));
  return { text: `client: 10 clients (shard …)\n${lines.join("\n")}\n`, reports, totals };
}

describe("merge", () => {
  it("adds the shards' windows and summaries, with histograms merged", () => {
    const a = shardOutput({ shard: "0/2", windows: 3, oks: [10, 20, 30], latencyMs: 5, failures: 1 });
    const b = shardOutput({ shard: "1/2", windows: 3, oks: [100, 5, 0], latencyMs: 900 });
    const merged = mergeClientLogs([parseClientLog("a", a.text), parseClientLog("b", b.text)]);
    expect(merged.notes).toEqual([]);
    expect(merged.windows).toHaveLength(3);
    for (const [index, window] of merged.windows.entries()) {
      const expected = mergeWindowReports([a.reports[index]!, b.reports[index]!]);
      expect(window.report.counts).toEqual(expected.counts);
      expect(window.report.latency).toEqual(expected.latency);
      expect(window.inFlight).toBe(2 * index);
      expect(window.gridEpochMs).toBe(START + (index + 1) * 1_000);
    }
    const totals = mergeWindowReports([a.totals, b.totals]);
    expect(merged.summary!.report.counts).toEqual(totals.counts);
    expect(merged.summary!.report.latency).toEqual(totals.latency);
    expect(merged.summary!.reason).toBe("duration");
  });

  it("reports missing shards, refuses a shard given twice and shards of different splits", () => {
    const shard = (label: string) => parseClientLog(label, shardOutput({ shard: label, windows: 1, oks: [1], latencyMs: 1 }).text);
    expect(mergeClientLogs([shard("0/3"), shard("2/3")]).notes).toEqual(["shards missing: 1/3 (the totals cover 2 of 3 shards)"]);
    expect(() => mergeClientLogs([shard("1/3"), { ...shard("1/3"), name: "again" }])).toThrow("shard 1/3 appears twice: 1/3 and again");
    expect(() => mergeClientLogs([shard("0/2"), shard("1/3")])).toThrow("shards of different splits");
  });

  it("merges by position, and says so, when the clients did not share a -start-at", () => {
    const a = parseClientLog("a", shardOutput({ windows: 2, oks: [1, 2], latencyMs: 1 }).text);
    const b = parseClientLog("b", shardOutput({ windows: 2, oks: [3, 4], latencyMs: 1, offsetMs: 437 }).text);
    const merged = mergeClientLogs([a, b]);
    expect(merged.notes).toEqual([expect.stringContaining("windows merged by position")]);
    expect(merged.windows.map((window) => window.report.counts.ok)).toEqual([4, 6]);
  });

  it("lets the windows of a client that printed no summary stand in for it", () => {
    const whole = shardOutput({ shard: "0/2", windows: 2, oks: [1, 2], latencyMs: 1 });
    const killed = shardOutput({ shard: "1/2", windows: 2, oks: [3, 4], latencyMs: 1 });
    const withoutSummary = killed.text.split("\n").slice(0, -2).join("\n");
    const merged = mergeClientLogs([parseClientLog("a", whole.text), parseClientLog("b", withoutSummary)]);
    expect(merged.notes).toEqual(["b has no summary (the client did not finish): its windows stand in for it"]);
    expect(merged.summary!.report.counts.ok).toBe(10);
  });

  it("names the line of a JSON object that is not a client's window", () => {
    expect(() => parseClientLog("x.log", '{"source":"server","concurrency":3}\n')).toThrow(
      /^x\.log:1: "time": expected string, received undefined \(is this a client's -json output\?\)$/,
    );
    expect(() => parseClientLog("x.log", "client: …\n{oops\n")).toThrow("x.log:2: not valid JSON");
    const window = shardOutput({ windows: 1, oks: [1], latencyMs: 1 }).text.split("\n")[1]!;
    expect(() => parseClientLog("x.log", `${window.replace('"ok":1', '"ok":-1')}\n`)).toThrow(/^x\.log:1: "ok": /);
  });
});

describe("merge's main", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  const run = (argv: string[]) => {
    let stdout = "";
    let stderr = "";
    const code = main(argv, {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      env: {},
    });
    return { code, stdout, stderr };
  };

  it("prints the client's own lines for the merged herd, as text or as JSON", () => {
    dir = mkdtempSync(join(tmpdir(), "merge-"));
    const a = shardOutput({ shard: "0/2", windows: 2, oks: [10, 20], latencyMs: 5 });
    const b = shardOutput({ shard: "1/2", windows: 2, oks: [30, 40], latencyMs: 7 });
    writeFileSync(join(dir, "a.log"), a.text);
    writeFileSync(join(dir, "b.log"), b.text);
    const text = run([join(dir, "a.log"), join(dir, "b.log")]);
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split("\n");
    const first = mergeWindowReports([a.reports[0]!, b.reports[0]!]);
    // The merged window lasts 1 s (from the JSON's epochMs and windowMs).
    expect(lines[0]).toBe(formatClientLine({ ...first, startMs: 0, endMs: 1_000 }, 0, NOT_BEHIND));
    expect(lines[2]).toBe(formatClientSummary({ ...mergeWindowReports([a.totals, b.totals]), startMs: 0, endMs: 2_000 }, 0));
    const json = run(["-json", join(dir, "a.log"), join(dir, "b.log")]);
    const objects = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(objects.map((object) => object.ok)).toEqual([40, 60, 100]);
    expect(objects[2]).toMatchObject({ summary: true, reason: "duration", ok: 100, attempts: 100 });
    expect(Object.keys(objects[0]!)).toEqual(Object.keys(JSON.parse(a.text.split("\n")[1]!)).filter((key) => key !== "shard"));
  });

  it("marks a merged window in which any shard fell behind, names the shard, and makes the verdict invalid", () => {
    dir = mkdtempSync(join(tmpdir(), "merge-"));
    const oks = [100, 100, 100, 100, 100, 100];
    writeFileSync(join(dir, "a.log"), shardOutput({ shard: "0/2", windows: 6, oks, latencyMs: 1 }).text);
    writeFileSync(join(dir, "b.log"), shardOutput({ shard: "1/2", windows: 6, oks, latencyMs: 1, behind: { 4: 500 } }).text);
    const merged = mergeClientLogs([
      parseClientLog("a", readFileSync(join(dir, "a.log"), "utf8")),
      parseClientLog("b", readFileSync(join(dir, "b.log"), "utf8")),
    ]);
    expect(merged.windows.map((window) => window.behind)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      "shard 1/2: lateness p99 500 ms",
      undefined,
    ]);
    // The lateness of the shards is merged from their histograms, with the exact maximum.
    expect(merged.windows[4]!.report.lateness?.maxMs).toBe(500);
    expect(merged.windows[3]!.report.lateness?.maxMs).toBe(0);

    const phases = ["-stop-at", String(START + 2_000), "-resume-at", String(START + 3_000)];
    const json = run(["-json", ...phases, join(dir, "a.log"), join(dir, "b.log")]);
    expect(json.code).toBe(0);
    const objects = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(objects.slice(0, 6).map((object) => object.behind)).toEqual([false, false, false, false, true, false]);
    expect(objects[6]).toMatchObject({ summary: true, behind: true, behindWindows: 1 });
    expect(objects[7]).toMatchObject({ metrics: { verdict: "invalid" } });
    expect(json.stderr).toContain("merge: WARNING: a client fell behind in the window ending");
    const text = run([...phases, join(dir, "a.log"), join(dir, "b.log")]);
    expect(text.stdout).toContain("CLIENT BEHIND (not the server's figures): shard 1/2: lateness p99 500 ms");
    expect(text.stdout).toMatch(/metrics: verdict invalid: the client could not keep up in the window 4\.0 s to 5\.0 s/);
  });

  it("computes the scenario metrics from the outage's times, with the server's side when its log is given", () => {
    dir = mkdtempSync(join(tmpdir(), "merge-"));
    // 10 windows of 1 s: 100 OK/s, nothing during the outage (4 s to 6 s), then 100 again.
    const oks = [100, 100, 100, 100, 0, 0, 100, 100, 100, 100];
    writeFileSync(join(dir, "a.log"), shardOutput({ windows: 10, oks, latencyMs: 1 }).text);
    const server = Array.from({ length: 10 }, (_, index) =>
      JSON.stringify(
        serverLine(START + (index + 1) * 1_000, {
          ...IDLE_SERVER,
          concurrency: index === 6 ? 200 : 5,
          peakConcurrency: index === 6 ? 400 : 5,
        }),
      ),
    );
    writeFileSync(join(dir, "server.log"), `${server.join("\n")}\n`);
    const phases = ["-stop-at", String(START + 4_000), "-resume-at", new Date(START + 6_000).toISOString()];
    const clientOnly = run([...phases, join(dir, "a.log")]);
    expect(clientOnly.stdout).toContain(
      "metrics: baseline 100.0 OK/s; attempts during the outage 0.00x the baseline (peak 0.00x); clients back 1.003s after the resume",
    );
    expect(clientOnly.stdout).toContain("the server's side needs its -json output");
    const withServer = run(["-json", "-limit", "30", "-server", join(dir, "server.log"), ...phases, join(dir, "a.log")]);
    const metrics = (JSON.parse(withServer.stdout.trim().split("\n").at(-1)!) as { metrics: Record<string, unknown> }).metrics;
    expect(metrics).toMatchObject({
      baselineOkPerSec: 100,
      peakConcurrencyAfterResume: 400,
      serverRecoveryMs: 2_000,
      verdict: "recovered",
    });
  });

  it("refuses a -server file that is not the server's -json output, naming its file and line", () => {
    dir = mkdtempSync(join(tmpdir(), "merge-"));
    const client = join(dir, "a.log");
    writeFileSync(client, shardOutput({ windows: 10, oks: Array<number>(10).fill(100), latencyMs: 1 }).text);
    const text = join(dir, "server.txt");
    writeFileSync(text, "Jun 21 22:11:08.519: concurrency:    8, last delay: 100ms\n");
    const phases = ["-stop-at", String(START + 4_000), "-resume-at", String(START + 6_000)];
    // The client's own output given as the server's: its first JSON line is line 2.
    expect(() => run(["-server", client, ...phases, client])).toThrow(
      new UsageError(`${client}:2: "concurrency": expected number, received undefined (is this the server's -json output?)`),
    );
    expect(() => run(["-server", text, ...phases, client])).toThrow(
      new UsageError(`${text}: no JSON line (is this the server's -json output?)`),
    );
    // Refused before anything is printed.
    let printed = "";
    const write = (more: string) => (printed += more);
    expect(() => main(["-server", client, ...phases, client], { stdout: { write }, stderr: { write }, env: {} })).toThrow(UsageError);
    expect(printed).toBe("");
  });

  it("refuses bad input with a usage error naming it", () => {
    expect(() => run([])).toThrow("no input files");
    expect(() => run(["/nonexistent/x.log"])).toThrow("cannot read /nonexistent/x.log: ENOENT");
    expect(() => run(["-stop-at", "0", "x"])).toThrow("-stop-at and -resume-at go together");
  });
});

describe("merge on hostile input: one line and exit 2, never a wrong answer", () => {
  /** merge's main on files of `texts` (by name) in a fresh folder: what it printed, or the usage error it threw. */
  const mergeFiles = (texts: Record<string, string>, flags: string[] = []) => {
    const dir = temporaryDir("merge-");
    for (const [name, text] of Object.entries(texts)) writeFileSync(join(dir, name), text);
    const { io, stdout, stderr } = capturedIo();
    const paths = Object.keys(texts).map((name) => join(dir, name));
    try {
      return { code: main([...flags, ...paths], io), stdout: stdout(), stderr: stderr(), dir };
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      return { code: error.exitCode, error: error.message.replaceAll(`${dir}/`, ""), stdout: stdout(), dir };
    }
  };
  const valid = shardOutput({ windows: 2, oks: [1, 2], latencyMs: 1 }).text;
  /** The first window line of `valid` with `edit` applied to its text. */
  const editedWindow = (edit: (line: string) => string) => `${edit(valid.split("\n")[1]!)}\n`;

  it("refuses an empty or non-JSON input beside a valid one, as it refuses it alone", () => {
    for (const bad of ["", "client: 10 clients\nnot JSON at all\n"]) {
      const alone = mergeFiles({ "bad.log": bad });
      const beside = mergeFiles({ "a.log": valid, "bad.log": bad });
      expect([alone, beside].map(({ code, error }) => ({ code, error }))).toEqual(
        [alone, beside].map(() => ({ code: 2, error: "bad.log: no JSON line (is this a client's -json output?)" })),
      );
      expect(beside.stdout).toBe("");
    }
  });

  it("refuses a shard label that -shard would refuse, naming the file and line", () => {
    const cases: [string, string][] = [
      ["x/y", '"x/y": must be i/n, e.g. 0/4 for the first of four shards'],
      // Refused before anything is allocated by the shard count (it ran out of heap).
      ["0/1000000000", '"0/1000000000": the shard count must be 1 to 1000000'],
      ["2/2", '"2/2": the shard index must be 0 to 1'],
    ];
    for (const [label, problem] of cases) {
      const result = mergeFiles({ "a.log": shardOutput({ shard: label, windows: 1, oks: [1], latencyMs: 1 }).text });
      expect(result.error).toBe(`a.log:2: "shard": ${problem} (is this a client's -json output?)`);
    }
    const mixed = `${shardOutput({ shard: "0/2", windows: 1, oks: [1], latencyMs: 1 }).text}${shardOutput({ shard: "1/2", windows: 1, oks: [1], latencyMs: 1 }).text}`;
    expect(mergeFiles({ "a.log": mixed }).error).toBe("a.log:5: shard 1/2 where line 2 says 0/2: one client has one shard");
  });

  it("counts the missing shards of a million without listing them", () => {
    const result = mergeFiles({ "a.log": shardOutput({ shard: "5/1000000", windows: 1, oks: [1], latencyMs: 1 }).text });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      "merge: shards missing: 0/1000000, 1/1000000, 2/1000000, 3/1000000, 4/1000000, 6/1000000, 7/1000000, 8/1000000, 9/1000000, 10/1000000 " +
        "and 999989 more (the totals cover 1 of 1000000 shards)\n",
    );
  });

  it("refuses a shard given twice, or shards of different splits, naming the files, as a usage error", () => {
    const shard = (label: string) => shardOutput({ shard: label, windows: 1, oks: [1], latencyMs: 1 }).text;
    expect(mergeFiles({ "a.log": shard("1/3"), "b.log": shard("1/3") }).error).toBe("shard 1/3 appears twice: a.log and b.log");
    expect(mergeFiles({ "a.log": shard("0/2"), "b.log": shard("1/3") }).error).toBe(
      "the inputs are shards of different splits: a.log 0/2, b.log 1/3",
    );
  });

  it("refuses figures that would print as Infinity or a function, naming the field", () => {
    const cases: [(line: string) => string, string][] = [
      [(line) => line.replace(/"windowMs":\d+/, '"windowMs":1e308'), '"windowMs": Too big'],
      [(line) => line.replace(/"epochMs":\d+/, '"epochMs":1.7e308'), '"epochMs": Too big'],
      [(line) => line.replace(/"epochMs":\d+/, '"epochMs":-1.7e308'), '"epochMs": Too small'],
      [(line) => line.replace(/"max":[\d.]+/, '"max":1e308'), '"latencyMs.max": Too big'],
      [(line) => line.replace('"errorKinds":{}', '"errorKinds":{"constructor":1}'), '"errorKinds": Unrecognized key: "constructor"'],
    ];
    for (const [edit, problem] of cases) {
      const result = mergeFiles({ "a.log": editedWindow(edit) }, ["-json"]);
      expect(result.error).toMatch(new RegExp(`^a\\.log:1: ${problem.replace(/[.]/g, "\\.")}`));
    }
  });

  it("merges a window with more retries than attempts (a late take-back of an attempt not sent) into a share of at most 100% (found by the fuzz)", () => {
    const result = mergeFiles({ "a.log": editedWindow((line) => line.replace('"retries":0', '"retries":2')) }, []);
    expect(result.error).toBeUndefined();
    expect(result.stdout).toContain("retries: 100.0% of attempts");
    expect(result.stdout).not.toMatch(/retries: (?:[2-9]\d\d|1\d\d\.[1-9]|10[1-9])[\d.]*% of attempts/);
  });

  it("refuses a control character where merge would print it, and escapes one it quotes (found by the fuzz)", () => {
    const behind = editedWindow((line) =>
      line.replace('"behind":false,"behindReason":null', '"behind":true,"behindReason":"x\\nOK: 9999 req/sec"'),
    );
    expect(mergeFiles({ "a.log": behind }).error).toBe(
      'a.log:1: "behindReason": must be printable text, without control characters (is this a client\'s -json output?)',
    );
    const key = editedWindow((line) => line.replace('"errorKinds":{}', '"errorKinds":{"a\\u0007b":1}'));
    expect(mergeFiles({ "a.log": key }).error).toBe(
      'a.log:1: "errorKinds": Unrecognized key: "a\\x07b" (is this a client\'s -json output?)',
    );
  });

  it("refuses a histogram that does not decode, before anything is printed", () => {
    const result = mergeFiles({ "a.log": valid.replace(/"latencyHistogram":"[^"]+"/, '"latencyHistogram":"HISTFAAAAGarbage"') });
    expect(result.error).toBe("a.log:2: a latencyHistogram that does not decode (is this a client's -json output?)");
    expect(result.stdout).toBe("");
  });

  it("refuses /dev/zero (stat says 0 bytes) at its first line's cap, naming the cap", () => {
    const { io } = capturedIo();
    expect(() => main(["/dev/zero"], io)).toThrow(
      new UsageError("/dev/zero:1: a line longer than 1 MiB (is this a client's -json output?)"),
    );
  });

  it("merges 130,000 windows of a client that printed no summary (a spread of them overflowed the stack)", () => {
    const windows = 130_000;
    const line = JSON.parse(editedWindow((text) => text)) as Record<string, unknown>;
    const lines = Array.from({ length: windows }, (_, index) =>
      JSON.stringify({
        ...line,
        ok: 0,
        latencyMs: null,
        latencyHistogram: null,
        lateness: null,
        latenessHistogram: null,
        epochMs: START + index * 1_000,
        gridEpochMs: START + index * 1_000,
      }),
    );
    const merged = mergeClientLogs([parseClientLog("big.log", lines.join("\n"))]);
    expect(merged.windows).toHaveLength(windows);
    expect(merged.summary!.report.endMs - merged.summary!.report.startMs).toBe(windows * 1_000);
  });
});
