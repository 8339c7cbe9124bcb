import type { Clock, TimerOwner } from "../clock/clock.ts";
import type { AttemptSink, Transport } from "../model/herd.ts";
import { OK_RESULT, type AttemptResult } from "../model/outcome.ts";
import type { ServiceQueue, ServiceTicket } from "../model/service-queue.ts";

const SHED_RESULT: AttemptResult = Object.freeze({ outcome: "error", errorKind: "http-5xx" });

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

  constructor(sink: AttemptSink) {
    this.sink = sink;
  }

  onTimer(): void {
    const sink = this.sink;
    this.sink = undefined;
    sink?.done(SHED_RESULT);
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

  constructor(sink: AttemptSink) {
    this.sink = sink;
  }
}

/**
 * What the network's send returns for `abort`: the ticket of a request in service, a
 * queued connection, a shed answer on its way, or undefined when there is nothing to
 * abort (no answer to the SYN, or already answered). A request that enters service at
 * once costs no object.
 */
type NetworkAttempt = Admission | QueuedConnection;

/** The server answered a request: one function for every request, its client's sink the argument. */
const answer = (sink: AttemptSink | undefined): void => sink?.done(OK_RESULT);

/**
 * What a stopped server does to the network, on loopback, in virtual time. While the
 * server runs, a request enters service at once. While it is stopped (SIGSTOP), the
 * kernel still completes connections into the listen backlog, up to its capacity; beyond
 * it, connection attempts get no answer and their clients time out. A client that gives
 * up closes its end, but the connection stays queued: on resume the server accepts every
 * queued connection, reads its request and takes it into service before it notices the
 * close. That is the stale work that keeps a server down after fixed-interval retries.
 *
 * When the server runs out of memory (the service queue's `maxInService`), a real one
 * dies; `onOutOfMemory` is called once and the request gets no answer.
 */
export class SimulatedNetwork {
  private stopped = false;
  private acceptQueue: QueuedConnection[] = [];
  private readonly queue: ServiceQueue;
  private readonly clock: Clock;
  private readonly backlog: number;
  /** Connection attempts that found the accept queue full. */
  droppedConnections = 0;
  /** Called once, at the instant the server runs out of memory. */
  onOutOfMemory: (() => void) | undefined = undefined;

  constructor(queue: ServiceQueue, clock: Clock, backlog: number) {
    this.queue = queue;
    this.clock = clock;
    this.backlog = backlog;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  get queuedConnections(): number {
    return this.acceptQueue.length;
  }

  stop(): void {
    this.stopped = true;
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
      connection.admission = this.admit(connection.sink);
      if (connection.closed && typeof connection.admission === "number") this.queue.abandon(connection.admission);
    }
  }

  readonly transport: Transport<NetworkAttempt> = {
    send: (sink) => {
      if (!this.stopped) return this.admit(sink);
      if (this.acceptQueue.length >= this.backlog) {
        this.droppedConnections++; // no SYN-ACK: the client can only time out
        return undefined;
      }
      const connection = new QueuedConnection(sink);
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

  /** Takes a request into service, or sends the 503 of a server that sheds it. */
  private admit(sink: AttemptSink | undefined): Admission {
    const ticket = this.queue.admit(answer, sink);
    if (ticket !== undefined) return ticket;
    if (this.queue.outOfMemory !== undefined) {
      const onOutOfMemory = this.onOutOfMemory;
      this.onOutOfMemory = undefined;
      onOutOfMemory?.();
      return undefined;
    }
    if (sink === undefined) return undefined;
    const pending = new PendingAnswer(sink);
    this.clock.arm(pending, IMMEDIATE_ANSWER_MS);
    return pending;
  }
}
