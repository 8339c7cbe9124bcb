import { type WarmableOwner, warmOwner } from "../../clock/clock.ts";
import { ServerBookkeeping } from "./bookkeeping.ts";
import type { CompletionCallback, ServiceTicket } from "./server-model.ts";

/** A ring of parallel arrays indexed by ticket modulo its size (a power of two): one of them, typed or not. */
type TicketRing<T> = { [slot: number]: T; readonly length: number };

/**
 * Moves tickets [head, tail) of `from` to their slots in `to`, a larger ring (tickets keep their
 * numbers), and returns `to`: how a TicketRingServer grows its rings, array by array.
 */
export function moveTickets<T, R extends TicketRing<T>>(from: TicketRing<T>, to: R, head: number, tail: number): R {
  const fromMask = from.length - 1;
  const toMask = to.length - 1;
  for (let ticket = head; ticket < tail; ticket++) to[ticket & toMask] = from[ticket & fromMask]!;
  return to;
}

/** A request's state in the ring: its client waits, or has gone away (a model may add states of its own above these). */
export const WAITED_FOR = 0;
export const ABANDONED = 1;

const INITIAL_CAPACITY = 1024;
/** Requests whose contexts warmAhead reads at once. */
const WARM_AHEAD = 32;

/**
 * A server model whose requests leave in ticket order, oldest first (ServiceQueue's shared
 * delay, OrderedPool's fifo threads): the requests held are tickets [head, tail), in a ring of
 * parallel arrays indexed by ticket modulo the capacity (a power of two), which doubles when
 * full. Requests admitted one after another sit side by side and leave front to back, which
 * the processor fetches ahead; an object per request was a cache miss per completion. The
 * arrays and pointers are fields of the model itself, read on its hot paths without a hop.
 */
export abstract class TicketRingServer extends ServerBookkeeping {
  protected arrivedAt = new Float64Array(INITIAL_CAPACITY);
  protected states = new Uint8Array(INITIAL_CAPACITY);
  protected callbacks: (CompletionCallback | undefined)[] = new Array<CompletionCallback | undefined>(INITIAL_CAPACITY).fill(undefined);
  protected contexts: unknown[] = new Array<unknown>(INITIAL_CAPACITY).fill(undefined);
  protected head = 0;
  protected tail = 0;
  /** Tickets below this have had their contexts read ahead (warmAhead); `warmed` keeps what was read alive. */
  protected warmedTo = 0;
  private warmed = 0;

  /** Requests held one by one (with their arrival time and callback). */
  get storedRequests(): number {
    return this.tail - this.head;
  }

  /** Holds a request arriving now, its client waiting, at the tail; returns its ticket. */
  protected store(callback: CompletionCallback | undefined, context: unknown): ServiceTicket {
    if (this.tail - this.head === this.arrivedAt.length) this.grow();
    const ticket = this.tail++;
    const slot = ticket & (this.arrivedAt.length - 1);
    this.arrivedAt[slot] = this.clock.now();
    this.states[slot] = WAITED_FOR;
    this.callbacks[slot] = callback;
    this.contexts[slot] = context;
    this.admittedTotal++;
    if (this.tail - this.head > this.mostStored) this.mostStored = this.tail - this.head;
    return ticket;
  }

  /**
   * The client of `ticket` went away: its request, if held and waited for, is marked abandoned
   * and lets go of its callback and context (a real server's response, request and socket).
   * False for a ticket not held, or a request already abandoned or taken out.
   */
  protected markAbandoned(ticket: ServiceTicket): boolean {
    // Tickets before the head have left already.
    if (ticket < this.head || ticket >= this.tail) return false;
    const slot = ticket & (this.arrivedAt.length - 1);
    if (this.states[slot] !== WAITED_FOR) return false;
    this.states[slot] = ABANDONED;
    this.callbacks[slot] = undefined;
    this.contexts[slot] = undefined;
    return true;
  }

  /**
   * Reads the contexts of the next requests to leave, up to ticket `end`, one batch at a time:
   * independent loads, which the processor fetches from memory in parallel, rather than one
   * cache miss per completion when the callback first touches its context (a million simulated
   * users do not fit in the cache). The value read is kept only so that the loads stay.
   */
  protected warmAhead(end: number): void {
    const mask = this.arrivedAt.length - 1;
    const last = Math.min(end, this.head + WARM_AHEAD);
    let seen = 0;
    for (let ticket = this.head; ticket < last; ticket++) seen += warmOwner(this.contexts[ticket & mask] as WarmableOwner | undefined);
    this.warmed += seen;
    this.warmedTo = last;
  }

  /** Every request held is lost (a crash): returns the contexts of those whose clients still wait. */
  protected loseAll(): unknown[] {
    const lost: unknown[] = [];
    const mask = this.arrivedAt.length - 1;
    for (let ticket = this.head; ticket < this.tail; ticket++) {
      const slot = ticket & mask;
      if (this.states[slot] === WAITED_FOR && this.callbacks[slot] !== undefined) lost.push(this.contexts[slot]);
      this.callbacks[slot] = undefined;
      this.contexts[slot] = undefined;
    }
    this.head = this.tail;
    return lost;
  }

  /** Lets go of every request stored, at once: new small arrays, tickets numbered on from the tail. */
  protected dropStored(): void {
    this.head = this.tail;
    this.arrivedAt = new Float64Array(INITIAL_CAPACITY);
    this.states = new Uint8Array(INITIAL_CAPACITY);
    this.callbacks = new Array<CompletionCallback | undefined>(INITIAL_CAPACITY).fill(undefined);
    this.contexts = new Array<unknown>(INITIAL_CAPACITY).fill(undefined);
  }

  /** Doubles the ring; a model with arrays of its own by ticket moves them too. */
  protected grow(): void {
    const size = this.arrivedAt.length * 2;
    const { head, tail } = this;
    this.arrivedAt = moveTickets(this.arrivedAt, new Float64Array(size), head, tail);
    this.states = moveTickets(this.states, new Uint8Array(size), head, tail);
    this.callbacks = moveTickets(this.callbacks, new Array<CompletionCallback | undefined>(size).fill(undefined), head, tail);
    this.contexts = moveTickets(this.contexts, new Array<unknown>(size).fill(undefined), head, tail);
  }
}
