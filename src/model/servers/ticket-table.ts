const INITIAL_CAPACITY = 1024;

/**
 * The requests a server holds, by ticket (tickets are handed out in rising order): the
 * ThreadPool's lookup for a client that goes away. A Map costs a hash insertion and
 * deletion per request, several times what the rest of a request costs the simulator; here
 * a ticket's slot in a ring is its number modulo the ring's size, so adding, finding and
 * removing are an array access and a comparison, with no bookkeeping of the oldest ticket.
 * A request held much longer than those after it (the bottom of a lifo queue, abandoned)
 * would be overwritten by a newer one that comes to its slot: it then moves to a Map of its
 * own, where few ever are, unless half the ring is held, and then the ring doubles.
 * Entries come back in ticket order.
 */
export class TicketTable<T extends { readonly ticket: number }> {
  private ring: (T | undefined)[] = new Array<T | undefined>(INITIAL_CAPACITY).fill(undefined);
  private inRing = 0;
  private readonly stragglers = new Map<number, T>();

  get size(): number {
    return this.inRing + this.stragglers.size;
  }

  /** Adds an entry whose ticket is above every ticket added before. */
  add(entry: T): void {
    const ticket = entry.ticket;
    if (this.ring[ticket & (this.ring.length - 1)] !== undefined && this.inRing * 2 >= this.ring.length) this.grow();
    const slot = ticket & (this.ring.length - 1);
    // Still taken (the doubled ring can put an older entry there too): that one waits aside.
    const occupant = this.ring[slot];
    if (occupant !== undefined) {
      this.stragglers.set(occupant.ticket, occupant);
      this.inRing--;
    }
    this.ring[slot] = entry;
    this.inRing++;
  }

  get(ticket: number): T | undefined {
    const entry = this.ring[ticket & (this.ring.length - 1)];
    if (entry !== undefined && entry.ticket === ticket) return entry;
    return this.stragglers.size === 0 ? undefined : this.stragglers.get(ticket);
  }

  /** Removes the entry of `ticket` (held now). */
  delete(ticket: number): void {
    const slot = ticket & (this.ring.length - 1);
    const entry = this.ring[slot];
    if (entry !== undefined && entry.ticket === ticket) {
      this.ring[slot] = undefined;
      this.inRing--;
    } else {
      this.stragglers.delete(ticket);
    }
  }

  /** Every entry, in ticket order. */
  values(): T[] {
    const entries = [...this.stragglers.values()];
    for (const entry of this.ring) if (entry !== undefined) entries.push(entry);
    return entries.sort((a, b) => a.ticket - b.ticket);
  }

  clear(): void {
    this.ring.fill(undefined);
    this.stragglers.clear();
    this.inRing = 0;
  }

  /** Doubles the ring; every entry moves to its slot in the larger one, where none collide. */
  private grow(): void {
    const ring = new Array<T | undefined>(this.ring.length * 2).fill(undefined);
    const mask = ring.length - 1;
    for (const entry of this.ring) if (entry !== undefined) ring[entry.ticket & mask] = entry;
    this.ring = ring;
  }
}
