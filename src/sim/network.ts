import type { Transport } from "../model/herd.ts";
import { OK_RESULT, type AttemptResult } from "../model/outcome.ts";
import type { ServiceQueue, ServiceTicket } from "../model/service-queue.ts";

const SHED_RESULT: AttemptResult = Object.freeze({ outcome: "error", errorKind: "http-5xx" });

/** One attempt waiting in the kernel's accept queue of a stopped server. */
interface QueuedConnection {
  done: ((result: AttemptResult) => void) | undefined;
  ticket: ServiceTicket | undefined;
  /** The client gave up and closed its end; the kernel still holds the connection. */
  closed: boolean;
}

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
      this.admit(connection);
      if (connection.closed && connection.ticket !== undefined) this.queue.abandon(connection.ticket);
    }
  }

  readonly transport: Transport = {
    send: (done) => {
      const connection: QueuedConnection = { done, ticket: undefined, closed: false };
      if (!this.stopped) {
        this.admit(connection);
      } else if (this.acceptQueue.length < this.backlog) {
        this.acceptQueue.push(connection);
      } else {
        this.droppedConnections++; // no SYN-ACK: the client can only time out
        return noop;
      }
      return () => {
        connection.done = undefined;
        connection.closed = true;
        if (connection.ticket !== undefined) this.queue.abandon(connection.ticket);
      };
    },
  };

  private admit(connection: QueuedConnection): void {
    const ticket = this.queue.admit(() => connection.done?.(OK_RESULT));
    if (ticket === undefined) {
      connection.done?.(SHED_RESULT);
      return;
    }
    connection.ticket = ticket;
  }
}

function noop(): void {}
