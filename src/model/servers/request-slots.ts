import type { CompletionCallback } from "./server-model.ts";

const INITIAL_RING = 1024;
const INITIAL_OVERFLOW = 64;
/** A slot that holds no request. */
const FREE = -1;

/**
 * The requests a thread pool holds, by ticket (tickets are handed out in rising order), each
 * in a slot of parallel arrays: its ticket, when it arrived, its deadline, the pool's flags
 * for it (typed arrays), its callback and its client's context. A ticket's slot is its number
 * modulo the ring's size, as in the exponential model's queue: requests admitted one after
 * another sit side by side, and a pool that serves them in order reads its arrays front to
 * back, which the processor fetches ahead. An object per request (the first version) was
 * memory not seen since it was written, a cache miss at each completion: at 10⁶ clients these
 * arrays take 0.97 of its time (BENCHMARKS.md).
 *
 * A request held much longer than those after it (the bottom of a lifo queue, an abandoned
 * one) would be overwritten by a newer one that comes to its slot: it then moves to an
 * overflow region past the ring, found through a Map, where few ever are, unless half the
 * ring is held, and then the ring doubles. A slot number is valid until the next `add`
 * (which may move every request): callers look a ticket up again after anything that may
 * admit one.
 */
export class RequestSlots {
  tickets: Float64Array;
  arrivedAt: Float64Array;
  deadlineAt: Float64Array;
  /** The pool's own bits (queued or in a thread, abandoned); 0 for a new request. */
  flags: Uint8Array;
  callbacks: (CompletionCallback | undefined)[];
  contexts: unknown[];
  private ringMask: number;
  private inRing = 0;
  /** Overflow slots by ticket, and the overflow slots free. */
  private readonly overflow = new Map<number, number>();
  private freeOverflow: number[] = [];

  constructor() {
    this.ringMask = INITIAL_RING - 1;
    const size = INITIAL_RING + INITIAL_OVERFLOW;
    [this.tickets, this.arrivedAt, this.deadlineAt, this.flags, this.callbacks, this.contexts] = emptyArrays(size);
    this.freeOverflow = overflowSlots(INITIAL_RING, INITIAL_OVERFLOW);
  }

  get size(): number {
    return this.inRing + this.overflow.size;
  }

  /** Holds a request whose ticket is above every ticket added before; returns its slot. */
  add(ticket: number, arrivedAt: number, deadlineAt: number, callback: CompletionCallback | undefined, context: unknown): number {
    let slot = ticket & this.ringMask;
    if (this.tickets[slot] !== FREE) {
      if (this.inRing * 2 >= this.ringMask + 1) {
        this.resize((this.ringMask + 1) * 2, this.tickets.length - this.ringMask - 1);
        slot = ticket & this.ringMask;
      }
      // Still taken (the doubled ring can put an older request there too): that one waits aside.
      if (this.tickets[slot] !== FREE) {
        this.moveToOverflow(slot);
        this.inRing--;
      }
    }
    this.tickets[slot] = ticket;
    this.arrivedAt[slot] = arrivedAt;
    this.deadlineAt[slot] = deadlineAt;
    this.flags[slot] = 0;
    this.callbacks[slot] = callback;
    this.contexts[slot] = context;
    this.inRing++;
    return slot;
  }

  /** The slot of `ticket`, or -1 when it is not held. */
  slotOf(ticket: number): number {
    const slot = ticket & this.ringMask;
    if (this.tickets[slot] === ticket) return slot;
    return this.overflow.size === 0 ? -1 : (this.overflow.get(ticket) ?? -1);
  }

  /** Lets go of the request in `slot` (held now), and of what its callback and context hold. */
  remove(slot: number): void {
    const ticket = this.tickets[slot]!;
    this.free(slot);
    if (slot <= this.ringMask) {
      this.inRing--;
    } else {
      this.overflow.delete(ticket);
      this.freeOverflow.push(slot);
    }
  }

  /** The slots held, in ticket order. */
  slotsInTicketOrder(): number[] {
    const slots: number[] = [];
    for (let slot = 0; slot < this.tickets.length; slot++) if (this.tickets[slot] !== FREE) slots.push(slot);
    return slots.sort((a, b) => this.tickets[a]! - this.tickets[b]!);
  }

  clear(): void {
    this.tickets.fill(FREE);
    this.callbacks.fill(undefined);
    this.contexts.fill(undefined);
    this.overflow.clear();
    this.freeOverflow = overflowSlots(this.ringMask + 1, this.tickets.length - this.ringMask - 1);
    this.inRing = 0;
  }

  private moveToOverflow(from: number): void {
    // A resize that keeps the ring's size puts every request in the ring back in its slot, this one too.
    if (this.freeOverflow.length === 0) this.resize(this.ringMask + 1, (this.tickets.length - this.ringMask - 1) * 2);
    const to = this.freeOverflow.pop()!;
    this.copy(this, from, to);
    this.overflow.set(this.tickets[to]!, to);
    this.free(from);
  }

  /** Marks `slot` free and lets go of what its callback and context hold. */
  private free(slot: number): void {
    this.tickets[slot] = FREE;
    this.callbacks[slot] = undefined;
    this.contexts[slot] = undefined;
  }

  /** New arrays of these sizes; every request moves to its ring slot there, or to the overflow when an older one is in it. */
  private resize(ring: number, overflowWanted: number): void {
    const held = this.slotsInTicketOrder();
    // Room for every request aside, so that re-placing them never resizes again.
    let overflow = overflowWanted;
    while (overflow < held.length) overflow *= 2;
    const old: SlotArrays = {
      tickets: this.tickets,
      arrivedAt: this.arrivedAt,
      deadlineAt: this.deadlineAt,
      flags: this.flags,
      callbacks: this.callbacks,
      contexts: this.contexts,
    };
    [this.tickets, this.arrivedAt, this.deadlineAt, this.flags, this.callbacks, this.contexts] = emptyArrays(ring + overflow);
    this.ringMask = ring - 1;
    this.overflow.clear();
    this.freeOverflow = overflowSlots(ring, overflow);
    this.inRing = 0;
    // In ticket order, so that a newer request takes the ring slot and an older one waits aside.
    for (const from of held) {
      const slot = old.tickets[from]! & this.ringMask;
      if (this.tickets[slot] !== FREE) this.moveToOverflow(slot);
      else this.inRing++;
      this.copy(old, from, slot);
    }
  }

  private copy(source: SlotArrays, from: number, to: number): void {
    this.tickets[to] = source.tickets[from]!;
    this.arrivedAt[to] = source.arrivedAt[from]!;
    this.deadlineAt[to] = source.deadlineAt[from]!;
    this.flags[to] = source.flags[from]!;
    this.callbacks[to] = source.callbacks[from];
    this.contexts[to] = source.contexts[from];
  }
}

type SlotArrays = Pick<RequestSlots, "tickets" | "arrivedAt" | "deadlineAt" | "flags" | "callbacks" | "contexts">;

function emptyArrays(size: number): [Float64Array, Float64Array, Float64Array, Uint8Array, (CompletionCallback | undefined)[], unknown[]] {
  return [
    new Float64Array(size).fill(FREE),
    new Float64Array(size),
    new Float64Array(size),
    new Uint8Array(size),
    new Array<CompletionCallback | undefined>(size).fill(undefined),
    new Array<unknown>(size).fill(undefined),
  ];
}

/** The overflow region's slots, the lowest taken first. */
function overflowSlots(ring: number, overflow: number): number[] {
  const slots: number[] = [];
  for (let slot = ring + overflow - 1; slot >= ring; slot--) slots.push(slot);
  return slots;
}
