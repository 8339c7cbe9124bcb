import type { AttemptSink, Transport } from "../model/herd.ts";
import { OK_RESULT, type AttemptResult } from "../model/outcome.ts";
import type { ServiceQueue, ServiceTicket } from "../model/service-queue.ts";

const SHED_RESULT: AttemptResult = Object.freeze({ outcome: "error", errorKind: "http-5xx" });

/** One attempt waiting in the kernel's accept queue of a stopped server. */
class QueuedConnection {
  sink: AttemptSink | undefined;
  ticket: ServiceTicket | undefined = undefined;
  /** The client gave up and closed its end; the kernel still holds the connection. */
  closed = false;

  constructor(sink: AttemptSink) {
    this.sink = sink;
  }
}

/**
 * What the network's send returns for `abort`: the ticket of a request in service, a
 * queued connection, or undefined when there is nothing to abort (no answer to the SYN,
 * or already answered). A request that enters service at once costs no object.
 */
type NetworkAttempt = ServiceTicket | QueuedConnection | undefined;

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
 */
export class SimulatedNetwork {
  private stopped = false;
  private acceptQueue: QueuedConnection[] = [];
  private readonly queue: ServiceQueue;
  private readonly backlog: number;
  /** Connection attempts that found the accept queue full. */
  droppedConnections = 0;

  constructor(queue: ServiceQueue, backlog: number) {
    this.queue = queue;
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
      connection.ticket = this.admit(connection.sink);
      if (connection.closed && connection.ticket !== undefined) this.queue.abandon(connection.ticket);
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
      attempt.sink = undefined;
      attempt.closed = true;
      if (attempt.ticket !== undefined) this.queue.abandon(attempt.ticket);
    },
  };

  /** Takes a request into service, or answers 503 when the server sheds it. */
  private admit(sink: AttemptSink | undefined): ServiceTicket | undefined {
    const ticket = this.queue.admit(answer, sink);
    if (ticket === undefined) sink?.done(SHED_RESULT);
    return ticket;
  }
}
