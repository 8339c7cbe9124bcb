import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent } from "undici";
import { classifyError } from "../client/classify-error.ts";
import { classifyStatus } from "../model/outcome.ts";

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
  readonly timeoutMs: number;
}

/** The limits of the whole probe, shared by its steps. */
export class ProbeBudget {
  requestsLeft: number;
  readonly deadlineAt: number;
  private readonly intervalMs: number;
  private nextSlotAt = -Infinity;
  /** A request waited for the rate ceiling: the throughput measured is the probe's, not the service's. */
  rateBound = false;
  sent = 0;

  constructor(maxRequests: number, maxRatePerSec: number, maxTimeMs: number, now = performance.now()) {
    this.requestsLeft = maxRequests;
    this.intervalMs = 1000 / maxRatePerSec;
    this.deadlineAt = now + maxTimeMs;
  }

  /** Takes one request's place: false when the requests or the time are spent; waits for the rate's next slot. */
  async take(signal: AbortSignal): Promise<boolean> {
    if (this.requestsLeft <= 0 || performance.now() >= this.deadlineAt || signal.aborted) return false;
    this.requestsLeft--;
    this.sent++;
    const now = performance.now();
    this.nextSlotAt = Math.max(now, this.nextSlotAt + this.intervalMs);
    const waitMs = this.nextSlotAt - now;
    // Timers have a millisecond's grain: shorter waits are owed and paid once they add up.
    if (waitMs >= 1) {
      this.rateBound = true;
      try {
        await sleep(waitMs, undefined, { signal });
      } catch {
        return false;
      }
    }
    return !signal.aborted;
  }

  get exhausted(): "requests" | "time" | undefined {
    if (this.requestsLeft <= 0) return "requests";
    if (performance.now() >= this.deadlineAt) return "time";
    return undefined;
  }
}

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
 * next step meets a service with nothing left over; an interrupt aborts them at once.
 */
export async function runStep(url: URL, plan: StepPlan, budget: ProbeBudget, interrupt: AbortSignal): Promise<StepRecord> {
  const agent = new Agent({
    connections: plan.concurrency,
    pipelining: 1,
    connect: { timeout: plan.timeoutMs },
    headersTimeout: plan.timeoutMs,
    bodyTimeout: plan.timeoutMs,
  });
  // Each user's request and rate wait listen to the interrupt.
  setMaxListeners(2 * plan.concurrency + 16, interrupt);
  const startedAt = performance.now();
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
    const elapsed = performance.now() - startedAt;
    // A service that has failed every one of its first answers is not loaded further.
    if (answered >= FAIL_FAST_ANSWERS && succeeded === 0) return true;
    return elapsed >= plan.maxDurationMs || (elapsed >= plan.durationMs && latencies.length >= plan.minRequests);
  };
  const path = `${url.pathname}${url.search}`;
  const user = async () => {
    while (!stepDone() && (await budget.take(interrupt))) {
      sent++;
      const sentAt = performance.now();
      let kind: string | undefined;
      try {
        const response = await agent.request({ origin: url.origin, path, method: "GET", signal: interrupt });
        await response.body.dump();
        const result = classifyStatus(response.statusCode);
        if (result.outcome !== "ok") kind = `HTTP ${response.statusCode}`;
      } catch (error) {
        if (interrupt.aborted) return;
        const result = classifyError(error);
        kind = result.outcome === "timedout" ? "timeout" : (result.errorKind ?? "other");
        if (kind === "other") kind = transportCode(error) ?? "other";
      }
      const now = performance.now();
      answered++;
      if (kind === undefined) succeeded++;
      else if (windowStartAt === undefined) errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
      if (windowStartAt === undefined) {
        if (answered >= warmUp && now - startedAt >= WARM_UP_SHARE * plan.durationMs) windowStartAt = now;
        continue;
      }
      lastAnswerAt = now;
      latencies.push(now - sentAt);
      if (kind !== undefined) {
        errors++;
        errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: plan.concurrency }, user));
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

/** The code of a transport error that classifyError has no kind for (a garbled answer: UND_ERR_…, HPE_…). */
function transportCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
