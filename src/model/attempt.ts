import type { Random } from "../backoff/random.ts";
import type { Clock, OwnerRows, TimerOwner } from "../clock/clock.ts";
import { ADMITTED, ADMITTED_PROBE, type ClientInstances, REJECTED, THROTTLED, WITHHELD } from "./client-instances.ts";
import type { RetryConfig, RetryGate } from "./client-loop.ts";
import { type AttemptOutcome, type AttemptResult, isNonFatal, type LocalRefusal, TIMEDOUT_RESULT } from "./outcome.ts";
import { HEDGE_KEEP, HEDGE_SEND_NEXT, hedgeAfterAnswer, hedgeAfterDelay } from "../backoff/hedge.ts";

/** Where a transport reports the result of an attempt. */
export interface AttemptSink {
  done(result: AttemptResult): void;
  /**
   * The client could not send the attempt at all (no file descriptor, no local port): its
   * own limit, not the server's answer. The attempt is held and sent again shortly, as if
   * its timer had fired late; nothing is retried as a failure. Instead of `done`, once.
   */
  notSent(): void;
}

/** How long an attempt that found no descriptor or local port waits before it tries again, ms. */
export const NOT_SENT_WAIT_MS = 50;

/**
 * How attempts reach a server: the real client sends HTTP with undici, the simulator
 * hands them to a modelled network. `send` reports through `sink.done` exactly once,
 * unless the attempt is aborted first, and never after that; it may report before it
 * returns. It returns whatever the transport needs to abort that attempt (an
 * AbortController, a ticket number), so that an attempt costs no closure. Callbacks, not
 * promises, so that a virtual clock sees every step in order.
 */
export interface Transport<Attempt = unknown> {
  send(sink: AttemptSink): Attempt;
  /** Aborts an attempt in flight (and its connection). */
  abort(attempt: Attempt): void;
}

/** What a herd tells its statistics; times in ms on the herd's clock. */
export interface HerdObserver {
  /** `latenessMs`: how long after its planned instant (its timer's due time) it went out; 0 on a virtual clock. */
  attemptStarted(isRetry: boolean, latenessMs: number): void;
  /** An attempt started could not be sent (see AttemptSink.notSent); it is not an attempt, nor a failure. */
  attemptNotSent(isRetry: boolean): void;
  attemptEnded(result: AttemptResult, latencyMs: number): void;
  /** An attempt the client refused itself (throttle, open breaker): never sent, never counted as an attempt. */
  attemptRefused(refusal: LocalRefusal): void;
  gaveUp(): void;
  /**
   * A request ended: it succeeded, or its user gave it up. `latencyMs` runs from its first
   * attempt to its end, retries and waits included: what the user waited; `retried` says it
   * took more than one try (sent or refused locally). Optional, so that a herd whose
   * observer does not ask for it does no extra work.
   */
  requestEnded?(ok: boolean, latencyMs: number, retried: boolean): void;
  /** A request made its first try (asked for only with requestEnded): requests still open at the end are counted from these. */
  requestStarted?(): void;
}

/**
 * What the attempt cycles of one herd (closed users) or one open-loop source (chains) share;
 * a herd's users keep their times in its rows (OwnerRows).
 */
export interface AttemptContext extends OwnerRows {
  readonly clock: Clock;
  readonly transport: Transport;
  readonly observer: HerdObserver;
  readonly options: { readonly timeoutMs: number; readonly retry: RetryConfig };
  /** The budgets, throttles and breakers of the client instances; undefined when none is on. */
  readonly fleet: ClientInstances | undefined;
  /** Attempts in flight, over all cycles. */
  inFlight: number;
  stopped: boolean;
  /**
   * No attempt is sent at or after this instant (the end of a run with a duration). A busy
   * process runs its overdue timers before the one that stops it; past the end they send
   * nothing, so the stop comes at once instead of after every overdue send.
   */
  stopAtMs: number;
}

/** AttemptCycle's flags. */
const RETRY = 1;
const IN_FLIGHT = 2;
const HELD_BACK = 4;
const HEDGED = 8;
/** The bits of AttemptCycle.flags that AttemptCycle uses; a subclass may keep a count above them. */
export const FLAG_BITS = 4;

/**
 * The lifecycle of one attempt at a time, which a closed user and an open-loop chain share:
 * admit it (the client's own throttle or breaker may refuse it), send it with its
 * deadline, take its result or its timeout, abort it when it timed out or when stopped.
 * What comes after an attempt (think, retry, give up, end the chain) is the subclass's
 * `decide`. The cycle is its own sink and its own timer: it waits or has an attempt in
 * flight, never both, so one timer serves for its wait and its attempt's deadline, and an
 * attempt allocates nothing, which matters for a million users in virtual time.
 */
export abstract class AttemptCycle implements AttemptSink, TimerOwner, RetryGate {
  clockSlot: unknown = undefined;
  /**
   * RETRY, IN_FLIGHT, HELD_BACK and HEDGED in one small integer rather than four fields (the
   * bits above FLAG_BITS are the subclass's): a million simulated users are memory-bound, and
   * every field is 8 bytes of each user's object.
   */
  protected flags = 0;
  /** What the transport returned for the attempt in flight. */
  private attempt: unknown = undefined;
  /** What the cycles of its herd or source share; public for the code that reads cycles ahead (warmOwner). */
  readonly context: AttemptContext;
  /** The cycle's number: its slot among the client instances (and, for a user, where its times are). */
  readonly index: number;

  constructor(context: AttemptContext, index: number) {
    this.context = context;
    this.index = index;
  }

  /** Whether the next attempt is a retry. */
  protected get isRetry(): boolean {
    return (this.flags & RETRY) !== 0;
  }

  protected set isRetry(retry: boolean) {
    this.flags = retry ? this.flags | RETRY : this.flags & ~RETRY;
  }

  private get attemptInFlight(): boolean {
    return (this.flags & IN_FLIGHT) !== 0;
  }

  private set attemptInFlight(inFlight: boolean) {
    this.flags = inFlight ? this.flags | IN_FLIGHT : this.flags & ~IN_FLIGHT;
  }

  /** The attempt about to go out could not be sent before (notSent): it is late even on a punctual clock. */
  private get heldBack(): boolean {
    return (this.flags & HELD_BACK) !== 0;
  }

  private set heldBack(heldBack: boolean) {
    this.flags = heldBack ? this.flags | HELD_BACK : this.flags & ~HELD_BACK;
  }

  /** With hedging: the copies of the request in flight; undefined when no hedged request is open (no lookup then). */
  private get copies(): HedgeCopy[] | undefined {
    return (this.flags & HEDGED) === 0 ? undefined : hedgingOf(this).copies;
  }

  private set copies(copies: HedgeCopy[] | undefined) {
    hedgingOf(this).copies = copies;
    this.flags = copies === undefined ? this.flags & ~HEDGED : this.flags | HEDGED;
  }

  /** With hedging: the copies of the open request sent so far. */
  private get copiesSent(): number {
    return hedgingOf(this).sent;
  }

  private set copiesSent(sent: number) {
    hedgingOf(this).sent = sent;
  }

  /** When the attempt in flight started. */
  protected abstract get startedAt(): number;
  protected abstract set startedAt(ms: number);
  /** When the next attempt is planned: its wait's due time, or a request's arrival on its schedule. */
  protected abstract get plannedAt(): number;
  protected abstract set plannedAt(ms: number);
  /** Where the cycle draws its random numbers. */
  protected abstract get random(): Random;

  /** After an attempt (or a local refusal, `result` undefined): the next wait, at least `minWaitMs`, or the end. */
  protected abstract decide(outcome: AttemptOutcome, result: AttemptResult | undefined, minWaitMs: number): void;

  /** How late an attempt going out at `now` is against its plan (0 when early). */
  protected latenessAt(now: number): number {
    const lateness = now - this.plannedAt;
    return lateness > 0 ? lateness : 0;
  }

  /** Whether the attempt about to go out was held back once (see notSent). */
  protected get wasHeldBack(): boolean {
    return this.heldBack;
  }

  /** Called as an attempt is tried, before the client's own admission: a user notes when its request started. */
  protected beforeAttempt(): void {}

  /** Called as the attempt in flight is held back (notSent), before it is: a user keeps the plan it is late against. */
  protected holdingBack(): void {}

  /** The wait is over (send), or the attempt's deadline has passed. */
  onTimer(): void {
    if (this.copies !== undefined) this.hedgeDelayPassed();
    else if (this.attemptInFlight) this.done(TIMEDOUT_RESULT);
    else this.send();
  }

  protected send(): void {
    const context = this.context;
    const now = context.clock.now();
    if (context.stopped || now >= context.stopAtMs) return;
    this.startedAt = now;
    this.beforeAttempt();
    // A hedged request's copies are admitted one by one (sendCopy).
    if (context.options.retry.hedgeDelayMs !== undefined) {
      this.copies = [];
      this.copiesSent = 0;
      this.sendCopy();
      return;
    }
    if (context.fleet !== undefined) {
      const admission = context.fleet.admit(this.index, this.isRetry, this.startedAt, this.random);
      if (admission !== ADMITTED) {
        this.refuse(admission === THROTTLED ? "throttled" : "rejected");
        return;
      }
    }
    context.inFlight++;
    context.observer.attemptStarted(this.isRetry, this.latenessAt(now));
    this.heldBack = false;
    this.attemptInFlight = true;
    context.clock.arm(this, context.options.timeoutMs);
    const attempt = context.transport.send(this);
    // The transport may have answered already (a server shedding load).
    if (this.attemptInFlight) this.attempt = attempt;
  }

  done(result: AttemptResult): void {
    if (!this.attemptInFlight) return;
    const context = this.context;
    this.attemptInFlight = false;
    context.clock.cancel(this);
    context.inFlight--;
    const attempt = this.attempt;
    this.attempt = undefined;
    // Our deadline passed: abort the request and its connection, as the reference does.
    if (result === TIMEDOUT_RESULT) context.transport.abort(attempt);
    if (context.stopped) return;
    context.observer.attemptEnded(result, context.clock.now() - this.startedAt);
    context.fleet?.attemptEnded(this.index, result.outcome, context.clock.now());
    this.decide(result.outcome, result, 0);
  }

  /** The attempt never went out: it is sent again shortly, still planned when it was, so the wait counts as lateness. */
  notSent(): void {
    if (!this.attemptInFlight) return;
    const context = this.context;
    this.attemptInFlight = false;
    context.clock.cancel(this);
    context.inFlight--;
    this.attempt = undefined;
    if (context.stopped) return;
    this.holdingBack();
    this.heldBack = true;
    context.observer.attemptNotSent(this.isRetry);
    context.clock.arm(this, NOT_SENT_WAIT_MS);
  }

  /**
   * The client refused this attempt itself: it fails at once, at no cost to the server.
   * Node waits at least 1 ms for any timer; so does the simulator, or a zero backoff after
   * a local refusal would spin at one instant.
   */
  private refuse(refusal: LocalRefusal): void {
    this.context.observer.attemptRefused(refusal);
    this.context.fleet!.refused(this.index);
    this.decide(refusal, undefined, 1);
  }

  /** RetryGate: the budget of this cycle's client instance decides. */
  allowRetry(outcome: AttemptOutcome): boolean {
    return this.context.fleet!.allowRetry(this.index, outcome, this.context.clock.now());
  }

  /** The gate for decideAfterAttempt: this cycle when client instances are on, none otherwise. */
  protected get gate(): RetryGate | undefined {
    return this.context.fleet === undefined ? undefined : this;
  }

  /** Gave up on the request: the observer and the instance's budget are told. */
  protected gaveUp(): void {
    this.context.observer.gaveUp();
    this.context.fleet?.requestAbandoned(this.index);
  }

  /** Arms the next attempt after the wait the policy chose, at least `minWaitMs`. */
  protected armRetry(waitMs: number, minWaitMs: number): void {
    this.waitFor(waitMs < minWaitMs ? minWaitMs : waitMs);
  }

  /** Arms the wait before the next attempt, and plans that attempt at the wait's end. */
  protected waitFor(waitMs: number): void {
    this.plannedAt = this.context.clock.now() + (waitMs > 0 ? waitMs : 0);
    this.context.clock.arm(this, waitMs);
  }

  /**
   * Hedging: sends one more copy of the open request, with its own deadline, and arms the
   * hedging delay before the next when copies are left (gRPC A6; src/backoff/hedge.ts). The
   * client's protections admit each copy (ClientInstances.admitCopy). False when they withheld
   * or refused it: then no further copy goes out for this request (A6: hedges are not sent while
   * the throttle says no; an open breaker stops them), and the copies in flight end it.
   */
  private sendCopy(): boolean {
    const context = this.context;
    const now = context.clock.now();
    if (context.stopped || now >= context.stopAtMs) return true;
    let probe = false;
    if (context.fleet !== undefined) {
      const admission = context.fleet.admitCopy(this.index, this.copiesSent === 0, now, this.random);
      if (admission === THROTTLED || admission === REJECTED || admission === WITHHELD) {
        this.copyRefused(admission);
        return false;
      }
      probe = admission === ADMITTED_PROBE;
    }
    const copy = new HedgeCopy(this, now, probe);
    this.copies!.push(copy);
    this.copiesSent++;
    context.inFlight++;
    const lateness = now - this.plannedAt;
    context.observer.attemptStarted(this.copiesSent > 1 || this.isRetry, lateness > 0 ? lateness : 0);
    context.clock.arm(copy, context.options.timeoutMs);
    const maxAttempts = context.options.retry.maxAttempts;
    if (hedgeAfterDelay(maxAttempts, this.copiesSent)) {
      this.plannedAt = now + context.options.retry.hedgeDelayMs!;
      context.clock.arm(this, context.options.retry.hedgeDelayMs!);
    }
    const attempt = context.transport.send(copy);
    // The transport may have answered already (a server shedding load).
    if (copy.inFlight) copy.attempt = attempt;
    return true;
  }

  /**
   * Hedging: the client's protections refused a copy (a throttle, an open breaker: a local
   * refusal, counted as one) or withheld a hedge (gRPC's budget: no attempt at all). No copy is
   * sent after it. A refused first copy is the request's refusal, as a refused attempt is.
   */
  private copyRefused(admission: typeof THROTTLED | typeof REJECTED | typeof WITHHELD): void {
    const context = this.context;
    const first = this.copiesSent === 0;
    this.copiesSent = context.options.retry.maxAttempts;
    context.clock.cancel(this);
    if (admission === WITHHELD) return;
    const refusal = admission === THROTTLED ? "throttled" : "rejected";
    if (!first) {
      context.observer.attemptRefused(refusal);
      return;
    }
    this.copies = undefined;
    this.refuse(refusal);
  }

  /** Hedging: the delay passed and no copy was kept: the next copy goes out. */
  private hedgeDelayPassed(): void {
    if (hedgeAfterDelay(this.context.options.retry.maxAttempts, this.copiesSent)) this.sendCopy();
  }

  /** Hedging: a copy answered or timed out. A success or a fatal failure is kept and the other copies cancelled. */
  copyDone(copy: HedgeCopy, result: AttemptResult): void {
    if (!copy.inFlight) return;
    const context = this.context;
    const copies = this.copies!;
    this.dropCopy(copy);
    if (result === TIMEDOUT_RESULT) context.transport.abort(copy.attempt);
    if (context.stopped) return;
    context.observer.attemptEnded(result, context.clock.now() - copy.startedAt);
    context.fleet?.copyEnded(this.index, copy.probe, result.outcome, context.clock.now());
    const answer = hedgeAfterAnswer(
      context.options.retry.maxAttempts,
      this.copiesSent,
      copies.length,
      result.outcome === "ok",
      isNonFatal(result),
    );
    if (answer === HEDGE_SEND_NEXT) {
      context.clock.cancel(this);
      // A hedge withheld or refused with nothing else in flight: this failure is the request's (A6).
      if (this.sendCopy() || copies.length > 0) return;
      this.closeHedgedRequest();
      this.decide(result.outcome, result, 0);
    } else if (answer === HEDGE_KEEP) {
      this.closeHedgedRequest();
      this.decide(result.outcome, result, 0);
    }
  }

  /** Hedging: a copy found no descriptor or local port; it was not an attempt, and goes out again shortly. */
  copyNotSent(copy: HedgeCopy): void {
    if (!copy.inFlight) return;
    this.dropCopy(copy);
    this.copiesSent--;
    if (this.context.stopped) return;
    this.context.observer.attemptNotSent(this.copiesSent > 0 || this.isRetry);
    this.context.clock.arm(this, NOT_SENT_WAIT_MS);
  }

  private dropCopy(copy: HedgeCopy): void {
    copy.inFlight = false;
    this.context.clock.cancel(copy);
    this.context.inFlight--;
    const copies = this.copies!;
    copies.splice(copies.indexOf(copy), 1);
  }

  /** Hedging: the request's answer is kept: its delay is cancelled, and so is every copy still in flight (not counted). */
  private closeHedgedRequest(): void {
    const copies = this.copies;
    if (copies === undefined) return;
    this.copies = undefined;
    this.context.clock.cancel(this);
    for (const copy of copies) {
      copy.inFlight = false;
      this.context.clock.cancel(copy);
      this.context.inFlight--;
      this.context.transport.abort(copy.attempt);
      this.context.fleet?.copyCancelled(this.index, copy.probe, this.context.clock.now());
    }
  }

  /** Cancels the wait, or ends the attempt in flight without counting it. */
  stop(): void {
    const context = this.context;
    this.closeHedgedRequest();
    context.clock.cancel(this);
    if (!this.attemptInFlight) return;
    this.attemptInFlight = false;
    context.inFlight--;
    const attempt = this.attempt;
    this.attempt = undefined;
    context.transport.abort(attempt);
  }
}

/** A cycle's hedging state: its open request's copies in flight, and how many of its copies were sent so far. */
interface Hedging {
  copies: HedgeCopy[] | undefined;
  sent: number;
}

/**
 * The hedging state of each cycle that ever hedged: beside the cycles rather than in two
 * fields of each, which most runs, without hedging, would pay for in every user.
 */
const hedgings = new WeakMap<AttemptCycle, Hedging>();

function hedgingOf(cycle: AttemptCycle): Hedging {
  let hedging = hedgings.get(cycle);
  if (hedging === undefined) {
    hedging = { copies: undefined, sent: 0 };
    hedgings.set(cycle, hedging);
  }
  return hedging;
}

/** One copy of a hedged request: its own sink and its own deadline, so that copies overlap. */
class HedgeCopy implements AttemptSink, TimerOwner {
  clockSlot: unknown = undefined;
  inFlight = true;
  /** What the transport returned for this copy. */
  attempt: unknown = undefined;
  readonly startedAt: number;
  /** The client's circuit breaker let it through as its probe (its outcome closes or reopens the breaker). */
  readonly probe: boolean;
  private readonly cycle: AttemptCycle;

  constructor(cycle: AttemptCycle, startedAt: number, probe: boolean) {
    this.cycle = cycle;
    this.startedAt = startedAt;
    this.probe = probe;
  }

  done(result: AttemptResult): void {
    this.cycle.copyDone(this, result);
  }

  notSent(): void {
    this.cycle.copyNotSent(this);
  }

  /** Its deadline passed. */
  onTimer(): void {
    this.cycle.copyDone(this, TIMEDOUT_RESULT);
  }

  /** The deadline its request carries down, when its cycle is a middle tier's call (DeadlineCarrier, src/model/upstream-calls.ts). */
  get carriedDeadline(): number | undefined {
    return (this.cycle as { readonly carriedDeadline?: number }).carriedDeadline;
  }
}
