import type { Clock, TimerOwner } from "../clock/clock.ts";
import type { AttemptSink, Transport } from "../model/attempt.ts";
import { OK_RESULT, type AttemptResult } from "../model/outcome.ts";
import type { Completion, ServiceTicket } from "../model/service-queue.ts";
import type { ServerModel } from "../model/servers/server-model.ts";

const SHED_RESULT: AttemptResult = Object.freeze({ outcome: "error", errorKind: "http-5xx" });
/** The connection of a request in a server that died (a crash fault). */
const RESET_RESULT: AttemptResult = Object.freeze({ outcome: "error", errorKind: "reset" });
/** A connection to a server that is down: nothing listens on the port. */
const REFUSED_RESULT: AttemptResult = Object.freeze({ outcome: "error", errorKind: "refused" });
/** A middle tier whose upstream call failed for good answers 502 at once. */
const BAD_GATEWAY_RESULT: AttemptResult = Object.freeze({ outcome: "error", errorKind: "http-5xx" });
/** A 500 from the server's -error-rate. */
const INJECTED_ERROR_RESULT: AttemptResult = Object.freeze({ outcome: "error", errorKind: "http-5xx" });

/** What the modelled server and clients put on the wire besides the request itself. */
export interface NetworkOptions {
  /** Retry-After on a shed request, ms (whole seconds, as the server rounds it); 0 or undefined for none. */
  readonly retryAfterMs?: number | undefined;
  /** A shed request is dropped unanswered (-shed-with drop): its client waits out its timeout, as for a SYN a full accept queue drops. */
  readonly dropShed?: boolean | undefined;
  /**
   * Deadline propagation to a deadline-aware server: every attempt carries its deadline,
   * `timeoutMs` after it was sent on `clock` (the client's own timeout), and the server
   * takes it into service with that deadline.
   */
  readonly deadline?: { readonly clock: Clock; readonly timeoutMs: number } | undefined;
}

/**
 * How long an answer given at once (a 503 from a shedding server) takes to reach its
 * client: a loopback HTTP round trip, 0.57–0.89 ms at the median on the machine of
 * BENCHMARKS.md ("loopback round trip of a 404"). Without it, a client that retries
 * without waiting and a server that sheds would trade answers forever at one instant of
 * virtual time, and the simulation would never end.
 */
export const IMMEDIATE_ANSWER_MS = 0.5;

/** A 503 on its way back to its client; the client may give up before it arrives. */
class PendingAnswer implements TimerOwner {
  clockSlot: unknown = undefined;
  sink: AttemptSink | undefined;
  private readonly result: AttemptResult;

  constructor(sink: AttemptSink, result: AttemptResult) {
    this.sink = sink;
    this.result = result;
  }

  onTimer(): void {
    const sink = this.sink;
    this.sink = undefined;
    sink?.done(this.result);
  }
}

/** What became of a request the server read: in service, shed (answer on its way), or neither. */
type Admission = ServiceTicket | PendingAnswer | undefined;

/** One attempt waiting in the kernel's accept queue of a stopped server. */
class QueuedConnection {
  sink: AttemptSink | undefined;
  admission: Admission = undefined;
  /** The client gave up and closed its end; the kernel still holds the connection. */
  closed = false;
  /** The deadline the request carries, or undefined for none. */
  readonly deadlineAt: number | undefined;

  constructor(sink: AttemptSink, deadlineAt: number | undefined) {
    this.sink = sink;
    this.deadlineAt = deadlineAt;
  }
}

/**
 * What the network's send returns for `abort`: the ticket of a request in service, a
 * queued connection, a shed answer on its way, or undefined when there is nothing to
 * abort (no answer to the SYN, or already answered). A request that enters service at
 * once costs no object.
 */
type NetworkAttempt = Admission | QueuedConnection;

/**
 * The server answered a request: one function for every request, its client's sink the
 * argument. A request taken out at its deadline gets no answer here: the deadline is its
 * client's own, which times out at that same instant (the real server's 504 races the
 * client's abort).
 */
const answer = (sink: AttemptSink | undefined, completion: Completion): void => {
  if (completion === "served") sink?.done(OK_RESULT);
  else if (completion === "injected-error") sink?.done(INJECTED_ERROR_RESULT);
  else if (completion === "upstream-failed") sink?.done(BAD_GATEWAY_RESULT);
};

/**
 * What a stopped server does to the network, on loopback, in virtual time. While the
 * server runs, a request enters service at once. While it is stopped (SIGSTOP), the
 * kernel still completes connections into the listen backlog, up to its capacity; beyond
 * it, connection attempts get no answer and their clients time out. A client that gives
 * up closes its end, but the connection stays queued: on resume the server accepts every
 * queued connection, reads its request and takes it into service before it notices the
 * close. That is the stale work that keeps a server down after fixed-interval retries.
 *
 * When the server runs out of memory (the server model's `maxInService`), a real one
 * dies; `onOutOfMemory` is called once and the request gets no answer.
 */
export class SimulatedNetwork {
  private stopped = false;
  /** Crashed and not yet started again: connections are refused. */
  private down = false;
  private acceptQueue: QueuedConnection[] = [];
  private readonly queue: ServerModel;
  private readonly clock: Clock;
  private readonly backlog: number;
  /** Connection attempts that found the accept queue full. */
  droppedConnections = 0;
  /** Called once, at the instant the server runs out of memory. */
  onOutOfMemory: (() => void) | undefined = undefined;

  /** Undefined when a shed request is dropped unanswered. */
  private readonly shedResult: AttemptResult | undefined;
  private readonly deadline: NetworkOptions["deadline"];

  constructor(queue: ServerModel, clock: Clock, backlog: number, options: NetworkOptions = {}) {
    this.queue = queue;
    this.clock = clock;
    this.backlog = backlog;
    const retryAfterMs = options.retryAfterMs ?? 0;
    this.shedResult =
      options.dropShed === true
        ? undefined
        : retryAfterMs > 0
          ? Object.freeze({ outcome: "error", errorKind: "http-5xx", retryAfterMs })
          : SHED_RESULT;
    this.deadline = options.deadline;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  get queuedConnections(): number {
    return this.acceptQueue.length;
  }

  /** Crashed and not started again yet. */
  get isDown(): boolean {
    return this.down;
  }

  stop(): void {
    this.stopped = true;
  }

  /**
   * The server dies (a crash fault): the requests in it are lost and their clients see their
   * connections reset at once, as do those queued in the kernel for a stopped server; until
   * `restart`, connections are refused.
   */
  crash(): void {
    this.down = true;
    this.stopped = false;
    const queued = this.acceptQueue;
    this.acceptQueue = [];
    const lost = this.queue.crash() as (AttemptSink | undefined)[];
    for (const connection of queued) if (connection.admission === undefined) lost.push(connection.sink);
    for (const sink of lost) sink?.done(RESET_RESULT);
  }

  /** The server is up again, empty, and accepts connections. */
  restart(): void {
    this.down = false;
  }

  /**
   * SIGCONT: every queued connection is accepted and its request enters service, oldest
   * first. `beforeAccepting` runs once the server runs again but before it accepts.
   */
  resume(beforeAccepting?: () => void): void {
    this.stopped = false;
    beforeAccepting?.();
    const queued = this.acceptQueue;
    this.acceptQueue = [];
    for (const connection of queued) {
      if (this.queue.outOfMemory !== undefined) return;
      connection.admission = this.admit(connection.sink, connection.deadlineAt);
      if (connection.closed && typeof connection.admission === "number") this.queue.abandon(connection.admission);
    }
  }

  readonly transport: Transport<NetworkAttempt> = {
    send: (sink) => {
      if (this.down) return this.answerAfterRoundTrip(sink, REFUSED_RESULT);
      const deadlineAt = this.deadlineOfNewAttempt(sink);
      if (!this.stopped) return this.admit(sink, deadlineAt);
      if (this.acceptQueue.length >= this.backlog) {
        this.droppedConnections++; // no SYN-ACK: the client can only time out
        return undefined;
      }
      const connection = new QueuedConnection(sink, deadlineAt);
      this.acceptQueue.push(connection);
      return connection;
    },
    abort: (attempt) => {
      if (attempt === undefined) return;
      if (typeof attempt === "number") {
        this.queue.abandon(attempt);
        return;
      }
      if (attempt instanceof QueuedConnection) {
        attempt.sink = undefined;
        attempt.closed = true;
        this.abortAdmission(attempt.admission);
        return;
      }
      this.abortAdmission(attempt);
    },
  };

  private abortAdmission(admission: Admission): void {
    if (admission === undefined) return;
    if (typeof admission === "number") {
      this.queue.abandon(admission);
      return;
    }
    admission.sink = undefined;
    this.clock.cancel(admission);
  }

  /**
   * Takes a request into service, or sends the 503 of a server that sheds it (none when it drops what it sheds). A request
   * whose deadline passed while it waited in the accept queue is not taken in (its client
   * timed out at that deadline and is gone).
   */
  private admit(sink: AttemptSink | undefined, deadlineAt: number | undefined): Admission {
    if (deadlineAt !== undefined && this.queue.expireOnArrival(deadlineAt)) return undefined;
    const ticket = this.queue.admit(answer, sink, deadlineAt);
    if (ticket !== undefined) return ticket;
    if (this.queue.outOfMemory !== undefined) {
      const onOutOfMemory = this.onOutOfMemory;
      this.onOutOfMemory = undefined;
      onOutOfMemory?.();
      return undefined;
    }
    if (sink === undefined || this.shedResult === undefined) return undefined;
    return this.answerAfterRoundTrip(sink, this.shedResult);
  }

  /** An answer given at once (a 503, a refused connection), reaching its client a loopback round trip later. */
  private answerAfterRoundTrip(sink: AttemptSink, result: AttemptResult): PendingAnswer {
    const pending = new PendingAnswer(sink, result);
    this.clock.arm(pending, IMMEDIATE_ANSWER_MS);
    return pending;
  }

  /**
   * The deadline a new attempt carries: now plus the client's timeout, or the earlier deadline
   * its sink carries down a chain of tiers (DeadlineCarrier); undefined without propagation.
   */
  private deadlineOfNewAttempt(sink: AttemptSink): number | undefined {
    const deadline = this.deadline;
    if (deadline === undefined) return undefined;
    const own = deadline.clock.now() + deadline.timeoutMs;
    const carried = (sink as { readonly carriedDeadline?: number }).carriedDeadline;
    const earlier = carried !== undefined && carried < own ? carried : own;
    return earlier < Infinity ? earlier : undefined;
  }
}
