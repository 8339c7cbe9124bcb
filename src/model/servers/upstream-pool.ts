import { CallbackTimer, type Clock } from "../../clock/clock.ts";
import type { AttemptOutcome } from "../outcome.ts";
import { ThreadPool, type ThreadPoolOptions } from "./queue.ts";
import type { ServiceSnapshot, ServiceTicket, UpstreamSnapshot } from "./server-model.ts";

/**
 * How a middle tier's upstream call ended, as its owner reports it: answered OK, failed for
 * good (its attempts spent, or its budget or breaker refused the retry), or given up because
 * the deadline its client sent had passed (a deadline-aware tier calls no further).
 */
export type UpstreamCallEnd = "ok" | "failed" | "expired";

/** Who makes the upstream calls for an UpstreamPool: the real server over HTTP, or a simulated network. */
export interface UpstreamCaller {
  /**
   * Request `ticket` has its thread: start its upstream call and report its end once with
   * `pool.callEnded(ticket, …)`, now or later. `context` is the one given to admit
   * (undefined once its client has gone away); `deadlineAt` the deadline given to admit
   * (Infinity for none), on the pool's clock.
   */
  startCall(ticket: ServiceTicket, context: unknown, deadlineAt: number): void;
  /** The call of `ticket` is no longer wanted (its client left with cancel-on-disconnect, a crash, a stop): abort it, report nothing. */
  cancelCall(ticket: ServiceTicket): void;
}

/**
 * A middle tier's model: the queue model's thread pool (threads, queue order and limit,
 * seeded service times, faults, deadlines, memory: src/model/servers/queue.ts), in which a
 * request that reaches a thread first calls the tier below and holds its thread while that
 * call runs, as a service with synchronous calls does. So a slow upstream fills this tier's
 * threads, and its queue grows behind them.
 *
 * admit → waits for a thread (or is shed at the queue limit, or dropped there at its
 * deadline: no call is made for it) → the caller is told to start the call → the call ends:
 * OK → the tier's own service time, then answered (served, or an injected error under an
 * errors fault); failed → answered "upstream-failed" at once (a 502), expired → "expired"
 * at once (a 504). A client that goes away leaves its request where it is (the call goes on,
 * for nobody), or with cancel-on-disconnect takes it out and its call is cancelled. A crash
 * or a stop cancels every call in flight.
 *
 * A call reported ended while it is being started (a local refusal of the tier's own breaker,
 * or a transport that answers at once) is taken at the clock's next turn, 0 ms later (1 ms on
 * Node's clock), so that a queue of such calls never nests one completion inside another.
 */
export class UpstreamPool extends ThreadPool {
  private readonly caller: UpstreamCaller;
  /** Tickets of the requests whose call is in flight. */
  private readonly calls = new Set<ServiceTicket>();
  /** Calls reported ended while being started, to take at the next turn. */
  private readonly endedEarly = new Map<ServiceTicket, UpstreamCallEnd>();
  private readonly earlyTimer = new CallbackTimer(() => this.takeEarlyEnds());
  private starting = false;
  private requestsTotal = 0;
  private attemptsTotal = 0;
  private attemptsOk = 0;
  private attemptsError = 0;
  private attemptsTimedout = 0;
  private refusedTotal = 0;
  private failuresTotal = 0;

  constructor(clock: Clock, options: ThreadPoolOptions, caller: UpstreamCaller) {
    super(clock, options);
    this.caller = caller;
  }

  /** The call of `ticket` ended; ignored for a call that was cancelled or already reported. */
  callEnded(ticket: ServiceTicket, end: UpstreamCallEnd): void {
    if (!this.calls.has(ticket) || this.endedEarly.has(ticket)) return;
    if (this.starting) {
      this.endedEarly.set(ticket, end);
      this.clock.arm(this.earlyTimer, 0);
      return;
    }
    this.calls.delete(ticket);
    this.endCall(ticket, end);
  }

  /** The caller sent an attempt upstream: a first attempt (one per call, k for a fan-out of k) or a retry. */
  attemptSent(isRetry: boolean): void {
    this.attemptsTotal++;
    if (!isRetry) this.requestsTotal++;
  }

  /** An attempt sent upstream ended; a local refusal (throttled, rejected) is counted as refused, never as sent. */
  attemptEnded(outcome: AttemptOutcome): void {
    if (outcome === "ok") this.attemptsOk++;
    else if (outcome === "error") this.attemptsError++;
    else if (outcome === "timedout") this.attemptsTimedout++;
    else this.refusedTotal++;
  }

  override abandon(ticket: ServiceTicket): void {
    if (!this.options.cancelOnDisconnect) {
      super.abandon(ticket);
      return;
    }
    // Its call leaves `calls` before the pool lets the request go: an end reported while the
    // pool answers others (a client's callback) then finds no call, not a request gone.
    this.endedEarly.delete(ticket);
    const inCall = this.calls.delete(ticket);
    super.abandon(ticket);
    if (inCall) this.caller.cancelCall(ticket);
  }

  override snapshot(): ServiceSnapshot {
    const snapshot = super.snapshot();
    const upstream: UpstreamSnapshot = {
      requests: this.requestsTotal,
      attempts: this.attemptsTotal,
      attemptsOk: this.attemptsOk,
      attemptsError: this.attemptsError,
      attemptsTimedout: this.attemptsTimedout,
      refused: this.refusedTotal,
      failures: this.failuresTotal,
      inFlight: this.calls.size,
    };
    return { ...snapshot, upstream };
  }

  override stop(): void {
    super.stop();
    this.clock.cancel(this.earlyTimer);
    this.cancelAll();
  }

  override crash(): unknown[] {
    const lost = super.crash();
    this.clock.cancel(this.earlyTimer);
    this.cancelAll();
    return lost;
  }

  /** The request has its thread: its call starts; its own service time waits for the call's end. */
  protected override beginService(slot: number): void {
    const requests = this.requests;
    const ticket = requests.tickets[slot]!;
    this.calls.add(ticket);
    this.starting = true;
    try {
      this.caller.startCall(ticket, requests.contexts[slot], requests.deadlineAt[slot]!);
    } finally {
      this.starting = false;
    }
  }

  /** The call of a request still held ended (`calls` holds only those: a cancelled or lost one leaves it). */
  private endCall(ticket: ServiceTicket, end: UpstreamCallEnd): void {
    const slot = this.requests.slotOf(ticket);
    if (end === "ok") {
      super.beginService(slot);
      return;
    }
    if (end === "failed") this.failuresTotal++;
    // Given up at its deadline after its call began: expired, as the base pool counts one dropped
    // before its call; one whose client has gone counts as abandoned (work for nobody), there too.
    else if (!this.isAbandoned(slot)) this.expiredTotal++;
    this.complete(slot, end === "failed" ? "upstream-failed" : "expired");
  }

  private takeEarlyEnds(): void {
    const ended = [...this.endedEarly];
    this.endedEarly.clear();
    for (const [ticket, end] of ended) {
      if (!this.calls.delete(ticket)) continue;
      this.endCall(ticket, end);
    }
  }

  private cancelAll(): void {
    const tickets = [...this.calls];
    this.calls.clear();
    this.endedEarly.clear();
    for (const ticket of tickets) this.caller.cancelCall(ticket);
  }
}
