/**
 * What a crash experiment came to, defined in one place for the demo's report, the
 * simulator and the scenario metrics. Pure: it reads the two programs' timelines.
 *
 * - **server back**: from the resume (SIGCONT) to the first server report from which
 *   concurrency stays at or below the concurrency limit through the last report. A report
 *   whose interval peaked above the limit but ends at or below it is that moment (the drop
 *   happened within its interval). Undefined when the last report is still above the limit.
 * - **clients back**: from the resume to the end of the first of two client windows in a
 *   row with OK ≥ 90 % of the baseline and errors + timeouts ≤ 5 % of it, both windows
 *   wholly after the resume. Undefined when there was none, or no baseline to compare with.
 *
 * The verdict, the first that applies:
 * - `invalid`: the client could not keep up (src/model/client-behind.ts) in a window the
 *   verdict depends on, from the outage's start to the end: its figures there are its own
 *   lag, so neither a collapse nor a recovery can be read from them. It wins over every
 *   server result; a server that ran out of memory is still reported as collapsed.
 * - `collapsed`: the server ran out of memory (it crashed), or it was not back under its
 *   concurrency limit (the model's line, `overloadAbove`) by its last report, or it was but
 *   the clients were still failing at the end (the last two windows after the last fault:
 *   OK under 90 % of the baseline and errors + timeouts at least half of it, as a server
 *   that sheds a storm it never gets out of): a metastable failure, since whatever caused it
 *   is long gone.
 *
 * "The resume" is the end of the trouble: SIGCONT for the one stop, else the end of the
 * last fault of `phases.faults`; a reason then names the faults (`capacity@15s+30s*0.25
 * ended at 45s`) and, for the queue model, the queue and threads busy at the last report.
 * - `too-short`: the run ended before the resume, or before the server reported after it:
 *   there is nothing to judge.
 * - `recovered`: the server is back and so are the clients.
 * - `recovering`: the server is back but the clients are not yet (often their own backoff
 *   keeps them away), by the end of the observation.
 */
import { type Fault, formatFault } from "./faults/fault-schedule.ts";
import { playedAs } from "./faults/kinds.ts";
import { durationText, secondsText as seconds } from "./seconds.ts";
import type { ClientWindow, Phases, ServerSample } from "./timeline.ts";

/** Every verdict, best first; the last two judge nothing about the server (nothing to judge, or a client that fell behind). */
export const VERDICTS = ["recovered", "recovering", "collapsed", "too-short", "invalid"] as const;
export type Verdict = (typeof VERDICTS)[number];

/** The worst of some verdicts (the latest in VERDICTS); recovered for none. */
export function worstVerdict(verdicts: readonly Verdict[]): Verdict {
  return verdicts.reduce<Verdict>((worst, verdict) => (VERDICTS.indexOf(verdict) > VERDICTS.indexOf(worst) ? verdict : worst), "recovered");
}

/** The server came back under its limit and stayed there (the clients may not have yet): the outage was survived. */
export function serverIsBack(verdict: Verdict): boolean {
  return verdict === "recovered" || verdict === "recovering";
}

/** One line per verdict, for a report's legend. */
export const VERDICT_DEFINITIONS: Readonly<Record<Verdict, string>> = {
  recovered: "the server came back under its concurrency limit and stayed there, and the clients came back",
  recovering: "the server came back under its concurrency limit and stayed there, but the clients had not come back by the end",
  collapsed:
    "the server was still above its concurrency limit (or its model's tipping line) at the end, or the clients were still failing " +
    "after the last fault had ended (a metastable failure), or it ran out of memory",
  "too-short": "the run ended before the resume or before the server reported after it: nothing to judge",
  invalid:
    "the client could not keep up (it sent late, its event loop lagged, or it ran out of descriptors) after the outage began: its figures are not the server's; " +
    "or, on a service of yours (demo -target), it was not back at its baseline when the run began",
};

/** A window is good when OK is back to this share of the baseline… */
export const GOOD_OK_SHARE = 0.9;
/** …and errors plus timeouts are at most this share of it. */
export const GOOD_FAILURE_SHARE = 0.05;
/** Good windows in a row that mark the clients' recovery; as many failing ones at the end mark a collapse. */
export const GOOD_WINDOWS_IN_A_ROW = 2;
/** A window is failing when OK is under GOOD_OK_SHARE of the baseline and errors plus timeouts are at least this share of it. */
export const FAILING_SHARE = 0.5;

/** The server hit its memory limit: a real server crashes there, and the run ends. */
export interface OutOfMemory {
  readonly atMs: number;
  /** Requests in service when it happened. */
  readonly inService: number;
}

export interface VerdictInput {
  readonly server: readonly ServerSample[];
  readonly client: readonly ClientWindow[];
  readonly phases: Phases;
  /**
   * The server is over its tipping point above this many in it: the exponential model's
   * limit; each model states its own (`overloadAbove`, src/model/servers/server-model.ts).
   */
  readonly concurrencyLimit: number;
  /** Mean OK rate before the outage; 0 when there was no window to take it from. */
  readonly baselineOkPerSec: number;
  readonly outOfMemory?: OutOfMemory | undefined;
  /**
   * A service the experiment does not run (demo -target) reports nothing: a watcher's answers
   * stand for its reports, and "server back" is read from them (watchedBackMs) instead.
   */
  readonly watched?: WatchedService | undefined;
  /** Why a watched service was not back at its baseline when the run began (undefined: it was): the run is not judged. */
  readonly unsettled?: string | undefined;
  /**
   * The simulator's prediction beside a watched service: "server back" read from the reports as
   * the watcher reads the real service, each report one look at it (at baseline when its requests
   * in service at that instant are at most the limit, so that a request arriving then waits at
   * most about one service time), WATCHED_BACK_IN_A_ROW in a row; not the peak between reports,
   * which the watcher does not see and which a bounded queue's bursts keep above the limit long
   * after its requests are served at baseline again.
   */
  readonly readAsWatcher?: boolean | undefined;
}

/** A watcher's view of a service: one request at a time, each at baseline or not. */
export interface WatchedService {
  /** Each request's send, ms from the run's start, in order, and whether it was served within `boundMs`. */
  readonly answers: readonly {
    readonly atMs: number;
    readonly atBaseline: boolean;
    /** What the answer took, ms, and what became of the request (served, 503, timeout, …): the evidence, not the verdict's input. */
    readonly latencyMs?: number;
    readonly fate?: string;
  }[];
  /** An answer at baseline comes within this, ms: the service's latency at rest, measured before the run. */
  readonly boundMs: number;
}

/** Answers in a row at baseline that make a watched service back: one could be a lucky gap in a queue. */
export const WATCHED_BACK_IN_A_ROW = 3;

/**
 * "server back" for a watched service: from the resume to the first of WATCHED_BACK_IN_A_ROW
 * answers in a row at baseline, unless as many in a row not at baseline came after them (a
 * relapse), before the end; undefined when it is not back by then. One slow answer, or two, is a
 * queue's gap, not a relapse: it does not move "back" to after it.
 */
export function watchedBackMs(watched: WatchedService, phases: Phases): number | undefined {
  const after = watched.answers.filter((answer) => answer.atMs >= phases.resumeAtMs && answer.atMs <= phases.endMs);
  let backFrom: number | undefined;
  let runStart = 0;
  for (const [index, answer] of after.entries()) {
    if (index > 0 && answer.atBaseline !== after[index - 1]!.atBaseline) runStart = index;
    if (index - runStart + 1 !== WATCHED_BACK_IN_A_ROW) continue;
    if (!answer.atBaseline) backFrom = undefined;
    else backFrom ??= runStart;
  }
  return backFrom === undefined ? undefined : after[backFrom]!.atMs - phases.resumeAtMs;
}

export interface Judgement {
  readonly verdict: Verdict;
  /** From the resume until the server stays at or below its limit; undefined if it never did. */
  readonly serverBackMs: number | undefined;
  /** From the resume to the end of the first of two good client windows; undefined if none. */
  readonly clientsBackMs: number | undefined;
  /** One line saying why, with the figures it rests on. */
  readonly why: string;
}

/** The server reports at or after the resume, up to the end. */
export function reportsAfterResume(server: readonly ServerSample[], phases: Phases): ServerSample[] {
  return server.filter((sample) => sample.atMs >= phases.resumeAtMs && sample.atMs <= phases.endMs);
}

/** "server back", as defined above, from the reports after the resume. */
export function serverBackMs(afterResume: readonly ServerSample[], resumeAtMs: number, limit: number): number | undefined {
  let recoveredFrom: number | undefined;
  for (let index = afterResume.length - 1; index >= 0; index--) {
    const sample = afterResume[index]!;
    if (sample.concurrency > limit) break;
    recoveredFrom = index;
    if (sample.peakConcurrency > limit) break;
  }
  return recoveredFrom === undefined ? undefined : afterResume[recoveredFrom]!.atMs - resumeAtMs;
}

/** "clients back", as defined above. */
export function clientsBackMs(client: readonly ClientWindow[], phases: Phases, baselineOkPerSec: number): number | undefined {
  if (baselineOkPerSec <= 0) return undefined;
  const candidates = client.filter((window) => window.startMs >= phases.resumeAtMs && window.endMs <= phases.endMs);
  let inARow = 0;
  for (let index = 0; index < candidates.length; index++) {
    const window = candidates[index]!;
    const good =
      window.okPerSec >= GOOD_OK_SHARE * baselineOkPerSec &&
      window.errorsPerSec + window.timedoutPerSec <= GOOD_FAILURE_SHARE * baselineOkPerSec;
    inARow = good ? inARow + 1 : 0;
    if (inARow === GOOD_WINDOWS_IN_A_ROW) return candidates[index - GOOD_WINDOWS_IN_A_ROW + 1]!.endMs - phases.resumeAtMs;
  }
  return undefined;
}

/** The first client window, from the outage's start to the end, in which the client fell behind. */
export function firstBehindWindow(client: readonly ClientWindow[], phases: Phases): ClientWindow | undefined {
  return client.find((window) => window.behind !== undefined && window.endMs > phases.stopAtMs && window.startMs < phases.endMs);
}
const GOOD_OK_PERCENT = `${Math.round(GOOD_OK_SHARE * 100)} % OK`;

/** The last windows after the resume, when each of them is failing (see FAILING_SHARE); undefined otherwise. */
export function stillFailing(client: readonly ClientWindow[], phases: Phases, baselineOkPerSec: number): ClientWindow | undefined {
  if (baselineOkPerSec <= 0) return undefined;
  const after = client.filter((window) => window.startMs >= phases.resumeAtMs && window.endMs <= phases.endMs);
  const last = after.slice(-GOOD_WINDOWS_IN_A_ROW);
  if (last.length < GOOD_WINDOWS_IN_A_ROW) return undefined;
  const failing = (window: ClientWindow) =>
    window.okPerSec < GOOD_OK_SHARE * baselineOkPerSec && window.errorsPerSec + window.timedoutPerSec >= FAILING_SHARE * baselineOkPerSec;
  return last.every(failing) ? last.at(-1) : undefined;
}

/** The trouble named, when it is more than the one stop: `capacity@15s+30s*0.25`; several joined by commas. */
export function faultsText(faults: readonly Fault[]): string {
  return faults.map((fault) => formatFault(fault, durationText)).join(", ");
}

/**
 * How a reason speaks of the end of the trouble: "after resume" for the one stop (the
 * experiment's SIGCONT), else after the faults it names ended.
 */
function troubleWords(phases: Phases): { readonly lead: string; readonly since: string } {
  const faults = phases.faults ?? [];
  if (faults.length === 0 || (faults.length === 1 && playedAs(faults[0]!, "pause"))) return { lead: "", since: "after resume" };
  const ended = faults.length === 1 ? "ended" : "had all ended";
  const origin = phases.runStartMs ?? 0;
  const asScheduled = faults.map((fault) => ({ ...fault, atMs: fault.atMs - origin }));
  return { lead: `after ${faultsText(asScheduled)} ${ended} at ${durationText(phases.resumeAtMs - origin)}: `, since: "after that" };
}

/** The queue model's state at a report, where the sample has it: " (queue 2400, threads busy 8)". */
function queueState(sample: ServerSample): string {
  if (sample.queueLength === undefined) return "";
  return ` (queue ${sample.queueLength}${sample.threadsBusy === undefined ? "" : `, threads busy ${sample.threadsBusy}`})`;
}

/** How the verdict reads the server: its reports after the resume, or a watcher's answers for a service not run here. */
interface ServerView {
  /** Anything after the resume to judge from. */
  readonly seen: boolean;
  readonly backMs: number | undefined;
  /** Why it is not back, after `lead` and with `since` ("after resume"). */
  notBack(since: string): string;
  /** What "back" means for it: "server back under its limit of 8". */
  readonly backWords: string;
  /** What it is when nothing after the resume was seen. */
  readonly unseenWords: string;
}

function serverView(input: VerdictInput): ServerView {
  const { phases, concurrencyLimit: limit, watched } = input;
  if (watched !== undefined) {
    const after = watched.answers.filter((answer) => answer.atMs >= phases.resumeAtMs && answer.atMs <= phases.endMs);
    const bound = `${WATCHED_BACK_IN_A_ROW} answers in a row within ${durationText(watched.boundMs)}`;
    return {
      seen: after.length > 0,
      backMs: watchedBackMs(watched, phases),
      notBack: (since) =>
        `service not back at baseline (${bound}) by the watcher's last answer, ${seconds(after.at(-1)!.atMs - phases.resumeAtMs)} ${since}: a metastable failure`,
      backWords: `service back at baseline (${bound})`,
      unseenWords: "watcher's answer",
    };
  }
  const afterResume = reportsAfterResume(input.server, phases);
  if (input.readAsWatcher === true) {
    const looks = { answers: input.server.map((sample) => ({ atMs: sample.atMs, atBaseline: sample.concurrency <= limit })), boundMs: 0 };
    const bound = `${WATCHED_BACK_IN_A_ROW} reports in a row with at most ${limit} in service, as a watcher sees it`;
    return {
      seen: afterResume.length > 0,
      backMs: watchedBackMs(looks, phases),
      notBack: (since) =>
        `server not back at baseline (${bound}) by its last report, ${seconds(afterResume.at(-1)!.atMs - phases.resumeAtMs)} ${since}: a metastable failure`,
      backWords: `server back at baseline (${bound})`,
      unseenWords: "server report",
    };
  }
  return {
    seen: afterResume.length > 0,
    backMs: serverBackMs(afterResume, phases.resumeAtMs, limit),
    notBack: (since) => {
      const last = afterResume.at(-1)!;
      return (
        `server still above its limit of ${limit} at its last report, ${seconds(last.atMs - phases.resumeAtMs)} ${since}, ` +
        `with ${last.concurrency} requests in service${queueState(last)}: a metastable failure`
      );
    },
    backWords: `server back under its limit of ${limit}`,
    unseenWords: "server report",
  };
}

/** The verdict, both recovery times and the reason, from the timelines. */
export function judge(input: VerdictInput): Judgement {
  const { phases } = input;
  const view = serverView(input);
  const serverBack = view.backMs;
  const clientsBack = clientsBackMs(input.client, phases, input.baselineOkPerSec);
  const judgement = (verdict: Verdict, why: string): Judgement => ({ verdict, serverBackMs: serverBack, clientsBackMs: clientsBack, why });
  const { lead, since } = troubleWords(phases);

  const oom = input.outOfMemory;
  if (oom !== undefined) {
    const when =
      oom.atMs < phases.stopAtMs
        ? `at ${seconds(oom.atMs)}, before the outage: overloaded without one`
        : `${seconds(oom.atMs - phases.resumeAtMs)} ${since}`;
    return {
      verdict: "collapsed",
      serverBackMs: undefined,
      clientsBackMs: undefined,
      why: `${lead}server ran out of memory with ${oom.inService} requests in service ${when}; a real server crashes there`,
    };
  }
  if (input.unsettled !== undefined) {
    return judgement("invalid", `the service was not back at its baseline when the run began (${input.unsettled}): the run is not judged`);
  }
  const behind = firstBehindWindow(input.client, phases);
  if (behind !== undefined) {
    const marked = input.client.filter(
      (window) => window.behind !== undefined && window.endMs > phases.stopAtMs && window.startMs < phases.endMs,
    );
    return judgement(
      "invalid",
      `the client could not keep up in the window ${seconds(behind.startMs)} to ${seconds(behind.endMs)} ` +
        `(${marked.length} window(s) marked from the outage on): ${behind.behind}; nothing about the server can be read from them`,
    );
  }
  if (phases.resumeAtMs > phases.endMs) {
    const before =
      phases.stopAtMs >= phases.endMs
        ? `before the outage at ${seconds(phases.stopAtMs)}`
        : `before the ${lead === "" ? "resume" : "last fault ended"} at ${seconds(phases.resumeAtMs)}`;
    return judgement("too-short", `the run ended at ${seconds(phases.endMs)}, ${before}: nothing to judge`);
  }
  if (!view.seen) {
    const end = lead === "" ? "the resume" : "the end of the last fault";
    return judgement("too-short", `no ${view.unseenWords} between ${end} at ${seconds(phases.resumeAtMs)} and the end: nothing to judge`);
  }
  const observedMs = phases.endMs - phases.resumeAtMs;
  if (serverBack === undefined) return judgement("collapsed", `${lead}${view.notBack(since)}`);
  const server = `${lead}${view.backWords} ${seconds(serverBack)} ${since}`;
  if (clientsBack !== undefined) {
    return judgement("recovered", `${server}; clients back at ${GOOD_OK_PERCENT} ${seconds(clientsBack)} ${since}`);
  }
  if (input.baselineOkPerSec <= 0) {
    return judgement("recovering", `${server}; clients not judged: no client window before the outage gives a baseline`);
  }
  const failing = stillFailing(input.client, phases, input.baselineOkPerSec);
  if (failing !== undefined) {
    const failures = failing.errorsPerSec + failing.timedoutPerSec;
    return judgement(
      "collapsed",
      `${server}, but the clients were still failing at the end: ${failing.okPerSec.toFixed(1)} OK/s and ` +
        `${failures.toFixed(1)} errors + timeouts/s in the last window, against a baseline of ${input.baselineOkPerSec.toFixed(1)} OK/s: ` +
        "a metastable failure",
    );
  }
  return judgement("recovering", `${server}; clients not back at ${GOOD_OK_PERCENT} by the end, ${seconds(observedMs)} ${since}`);
}
