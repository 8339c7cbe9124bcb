const INITIAL_CAPACITY = 1024;

/**
 * The requests a server holds, by ticket (tickets are handed out in rising order): the
 * ThreadPool's lookup for a client that goes away. A Map costs a hash insertion and
 * deletion per request, several times what the rest of a request costs the simulator; here
 * the tickets from the oldest still held to the newest index a ring, so adding, finding and
 * removing are an array access. A request held much longer than those after it (the bottom
 * of a lifo queue, abandoned) would stretch the ring without bound: once the ring is more
 * than half holes, such stragglers move to a Map of their own, where few ever are.
 * Entries come back in ticket order.
 */
export class TicketTable<T extends { readonly ticket: number }> {
  private ring: (T | undefined)[] = new Array<T | undefined>(INITIAL_CAPACITY).fill(undefined);
  /** Tickets [low, next) map to ring slots (ticket & mask); those below low are in `stragglers` or gone. */
  private low = 0;
  private next = 0;
  private inRing = 0;
  private readonly stragglers = new Map<number, T>();

  get size(): number {
    return this.inRing + this.stragglers.size;
  }

  /** Adds an entry whose ticket is above every ticket added before. */
  add(entry: T): void {
    const ticket = entry.ticket;
    if (this.inRing === 0) this.low = ticket;
    if (ticket - this.low >= this.ring.length) this.makeRoom(ticket);
    this.ring[ticket & (this.ring.length - 1)] = entry;
    this.next = ticket + 1;
    this.inRing++;
  }

  get(ticket: number): T | undefined {
    if (ticket >= this.low) return ticket < this.next ? this.ring[ticket & (this.ring.length - 1)] : undefined;
    return this.stragglers.size === 0 ? undefined : this.stragglers.get(ticket);
  }

  /** Removes the entry of `ticket` (held now). */
  delete(ticket: number): void {
    if (ticket < this.low) {
      this.stragglers.delete(ticket);
      return;
    }
    const mask = this.ring.length - 1;
    this.ring[ticket & mask] = undefined;
    this.inRing--;
    if (ticket !== this.low) return;
    if (this.inRing === 0) {
      this.low = this.next;
      return;
    }
    while (this.ring[this.low & mask] === undefined) this.low++;
  }

  /** Every entry, in ticket order. */
  values(): T[] {
    const entries = [...this.stragglers.values()];
    const mask = this.ring.length - 1;
    for (let ticket = this.low; ticket < this.next; ticket++) {
      const entry = this.ring[ticket & mask];
      if (entry !== undefined) entries.push(entry);
    }
    return entries;
  }

  clear(): void {
    this.ring.fill(undefined);
    this.stragglers.clear();
    this.low = this.next;
    this.inRing = 0;
  }

  /** Makes the ring reach `ticket`: doubles it while at least half of it is held, else moves the oldest entries to the stragglers. */
  private makeRoom(ticket: number): void {
    const capacity = this.ring.length;
    if (this.inRing * 2 >= capacity) {
      const ring = new Array<T | undefined>(capacity * 2).fill(undefined);
      for (let held = this.low; held < this.next; held++) ring[held & (capacity * 2 - 1)] = this.ring[held & (capacity - 1)];
      this.ring = ring;
      if (ticket - this.low < ring.length) return;
    }
    // The ring keeps the newest half of its span; older entries become stragglers.
    const mask = this.ring.length - 1;
    const newLow = ticket - (this.ring.length >> 1);
    for (; this.low < newLow && this.low < this.next; this.low++) {
      const entry = this.ring[this.low & mask];
      if (entry === undefined) continue;
      this.stragglers.set(this.low, entry);
      this.ring[this.low & mask] = undefined;
      this.inRing--;
    }
    this.low = newLow;
    while (this.inRing > 0 && this.ring[this.low & mask] === undefined) this.low++;
  }
}
