import { setMaxListeners } from "node:events";
import { Agent } from "undici";
import { classifyError } from "../runner/classify-error.ts";
import { classifyStatus } from "../model/outcome.ts";
import { readBodyToEnd } from "../runtime/http-body.ts";
import type { ProbeBudget } from "./budget.ts";

/**
 * One closed-loop step against a real service: `concurrency` users, each sending a GET as
 * soon as its last answer came. Every request is counted against the probe's shared budget
 * (total requests, a rate ceiling and a deadline) before it is sent, so that no step and no
 * user can exceed them.
 */
export interface StepPlan {
  readonly concurrency: number;
  /** The step measures at least this long … */
  readonly durationMs: number;
  /** … and until this many answers, */
  readonly minRequests: number;
  /** … but no longer than this. */
  readonly maxDurationMs: number;
  /** Bounds each whole exchange: connect, headers and body. */
  readonly timeoutMs: number;
  /** An answer with a longer body is an error, "body-too-large". */
  readonly maxBodyBytes: number;
}

/**
 * Where a step reads the time, and whom it tells how many of its users are running: for a
 * probe, performance.now and no one. A test on a virtual clock (test/helpers/server-steps.ts)
 * moves the server's time on only once every running user's request has reached the server.
 */
export interface StepTiming {
  readonly now: () => number;
  readonly onRunningUsers?: (running: number) => void;
}

export const REAL_TIMING: StepTiming = { now: () => performance.now() };

/** A step whose first this many answers all failed ends there. */
const FAIL_FAST_ANSWERS = 20;

/** The share of -step-duration at a step's start that is not measured. */
const WARM_UP_SHARE = 0.2;

export interface StepRecord {
  readonly concurrency: number;
  /** Latencies of the answers in the measuring window, ms, sorted. */
  readonly latenciesMs: readonly number[];
  readonly errors: number;
  /** Errors by kind, the warm-up's included: "HTTP 500", "refused", "timeout", a transport's own code … */
  readonly errorKinds: ReadonlyMap<string, number>;
  readonly windowMs: number;
  /** Answers of the whole step, the warm-up included, and of them those that succeeded. */
  readonly allAnswers: number;
  readonly allSucceeded: number;
  /** Every request sent in the step, the warm-up included. */
  readonly sent: number;
  readonly interrupted: boolean;
}

/**
 * Runs one step. Its start is left out, as warm-up: the first answer of each user (its
 * connection's set-up) and the step's first fifth (the service and the probe settling at the
 * new concurrency); the measuring window starts after both and ends with the last answer.
 * Requests still in flight when the step ends are awaited (each within the timeout), so the
 * next step meets a service with nothing left over; the budget's stop (the deadline, an
 * interrupt) aborts them at once. A step never runs more users than the requests left.
 */
export async function runStep(
  url: URL,
  plan: StepPlan,
  budget: ProbeBudget,
  interrupt: AbortSignal,
  timing: StepTiming = REAL_TIMING,
): Promise<StepRecord> {
  const agent = new Agent({
    connections: plan.concurrency,
    pipelining: 1,
    connect: { timeout: plan.timeoutMs },
    headersTimeout: plan.timeoutMs,
    bodyTimeout: plan.timeoutMs,
  });
  const users = Math.max(1, Math.min(plan.concurrency, budget.requestsLeft));
  // Each user's request in flight listens to the budget's stop.
  setMaxListeners(users + 16, budget.stop);
  const startedAt = timing.now();
  const warmUp = plan.concurrency;
  let answered = 0;
  let succeeded = 0;
  let windowStartAt: number | undefined;
  let lastAnswerAt = startedAt;
  let errors = 0;
  let sent = 0;
  const latencies: number[] = [];
  const errorKinds = new Map<string, number>();
  const stepDone = () => {
    const elapsed = timing.now() - startedAt;
    // A service that has failed every one of its first answers is not loaded further.
    if (answered >= FAIL_FAST_ANSWERS && succeeded === 0) return true;
    return elapsed >= plan.maxDurationMs || (elapsed >= plan.durationMs && latencies.length >= plan.minRequests);
  };
  const exchange = exchangeWith(agent, url, plan, budget.stop);
  const user = async () => {
    while (!stepDone() && (await budget.take())) {
      sent++;
      const sentAt = timing.now();
      const kind = await exchange();
      if (kind === STOPPED) return;
      const now = timing.now();
      answered++;
      // Answers at the window's opening instant came with its first edge, before it (a constant
      // service time's threads finish together): counted in, they raised the throughput of a
      // closed loop on a virtual clock by up to concurrency − 1 answers a window (8 % at 4 users).
      const beforeWindow = windowStartAt === undefined || now === windowStartAt;
      if (kind === undefined) succeeded++;
      else if (beforeWindow) errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
      if (windowStartAt === undefined && answered >= warmUp && now - startedAt >= WARM_UP_SHARE * plan.durationMs) windowStartAt = now;
      if (beforeWindow) continue;
      lastAnswerAt = now;
      latencies.push(now - sentAt);
      if (kind !== undefined) {
        errors++;
        errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
      }
    }
  };
  try {
    await runUsers(users, user, timing);
  } finally {
    await agent.destroy();
  }
  latencies.sort((a, b) => a - b);
  const windowMs = windowStartAt === undefined ? 0 : lastAnswerAt - windowStartAt;
  return {
    concurrency: plan.concurrency,
    latenciesMs: latencies,
    errors,
    errorKinds,
    windowMs,
    allAnswers: answered,
    allSucceeded: succeeded,
    sent,
    interrupted: interrupt.aborted,
  };
}

/** Runs `users` copies of `user` side by side, telling `timing` how many are running as each starts and ends. */
async function runUsers(users: number, user: () => Promise<void>, timing: StepTiming): Promise<void> {
  let running = 0;
  const counted = async () => {
    timing.onRunningUsers?.(++running);
    try {
      await user();
    } finally {
      timing.onRunningUsers?.(--running);
    }
  };
  await Promise.all(Array.from({ length: users }, counted));
}

/** An exchange aborted by the budget's stop: not the service's answer, not counted. */
const STOPPED = Symbol("stopped");

/**
 * One GET and its whole body, within the timeout: resolves with the error's kind ("HTTP 503",
 * "timeout", "body-too-large", a transport's code), undefined for a success, or STOPPED.
 */
function exchangeWith(agent: Agent, url: URL, plan: StepPlan, stop: AbortSignal): () => Promise<string | undefined | typeof STOPPED> {
  const path = `${url.pathname}${url.search}`;
  return async () => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), plan.timeoutMs);
    const onStop = () => controller.abort();
    stop.addEventListener("abort", onStop, { once: true });
    try {
      const response = await agent.request({ origin: url.origin, path, method: "GET", signal: controller.signal });
      const statusKind = classifyStatus(response.statusCode).outcome === "ok" ? undefined : `HTTP ${response.statusCode}`;
      // Read whatever the status, so that the connection is reused or destroyed; an error status stands.
      try {
        await readBodyToEnd(response.body, plan.maxBodyBytes, response.headers["content-length"]);
      } catch (error) {
        if (statusKind === undefined || stop.aborted) throw error;
      }
      return statusKind;
    } catch (error) {
      if (stop.aborted) return STOPPED;
      if (controller.signal.aborted) return "timeout";
      const result = classifyError(error);
      const kind = result.outcome === "timedout" ? "timeout" : (result.errorKind ?? "other");
      return kind === "other" ? (transportCode(error) ?? "other") : kind;
    } finally {
      clearTimeout(timer);
      stop.removeEventListener("abort", onStop);
    }
  };
}

/**
 * The code of a transport error that classifyError has no kind for (UND_ERR_…), or
 * "invalid-http" for an answer undici's parser refused (its errors carry no code).
 */
function transportCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    if ((current as { name?: unknown }).name === "HTTPParserError") return "invalid-http";
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
