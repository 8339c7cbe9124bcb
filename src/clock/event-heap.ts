/**
 * A min-heap of timed entries, ordered by time and then by sequence number, so entries due
 * at the same instant come out first-in first-out. Used by the manual clock that drives
 * tests and the simulator, where it holds up to millions of entries and is the innermost
 * loop: the keys live in typed arrays, so sifting compares numbers in contiguous memory
 * instead of following a pointer per comparison, and the heap is 4-ary, half as deep as a
 * binary one with the four children of a node side by side. Keys are unique (sequence
 * numbers are), so the order in which entries come out is fully determined by the keys.
 */
export class EventHeap<T> {
  private dueAts = new Float64Array(1024);
  private sequences = new Float64Array(1024);
  private items: (T | undefined)[] = [];
  private length = 0;

  get size(): number {
    return this.length;
  }

  /** The top entry's time; only meaningful when size > 0. */
  topDueAt(): number {
    return this.dueAts[0]!;
  }

  /** The top entry's sequence number; only meaningful when size > 0. */
  topSequence(): number {
    return this.sequences[0]!;
  }

  topItem(): T | undefined {
    return this.items[0];
  }

  push(dueAt: number, sequence: number, item: T): void {
    if (this.length === this.dueAts.length) this.grow();
    const dueAts = this.dueAts;
    const sequences = this.sequences;
    const items = this.items;
    let index = this.length++;
    while (index > 0) {
      const parent = (index - 1) >> 2;
      const parentDueAt = dueAts[parent]!;
      if (parentDueAt < dueAt || (parentDueAt === dueAt && sequences[parent]! < sequence)) break;
      dueAts[index] = parentDueAt;
      sequences[index] = sequences[parent]!;
      items[index] = items[parent];
      index = parent;
    }
    dueAts[index] = dueAt;
    sequences[index] = sequence;
    items[index] = item;
  }

  /** Removes the top entry. */
  pop(): void {
    if (this.length === 0) return;
    const length = --this.length;
    const dueAts = this.dueAts;
    const sequences = this.sequences;
    const items = this.items;
    // The last entry fills the hole at the top and sinks to its place.
    const dueAt = dueAts[length]!;
    const sequence = sequences[length]!;
    const item = items[length];
    items[length] = undefined; // no reference kept to a fired timer
    if (length === 0) return;
    let index = 0;
    for (;;) {
      const first = 4 * index + 1;
      if (first >= length) break;
      const end = first + 4 < length ? first + 4 : length;
      let best = first;
      let bestDueAt = dueAts[first]!;
      let bestSequence = sequences[first]!;
      for (let child = first + 1; child < end; child++) {
        const childDueAt = dueAts[child]!;
        if (childDueAt < bestDueAt || (childDueAt === bestDueAt && sequences[child]! < bestSequence)) {
          best = child;
          bestDueAt = childDueAt;
          bestSequence = sequences[child]!;
        }
      }
      if (dueAt < bestDueAt || (dueAt === bestDueAt && sequence < bestSequence)) break;
      dueAts[index] = bestDueAt;
      sequences[index] = bestSequence;
      items[index] = items[best];
      index = best;
    }
    dueAts[index] = dueAt;
    sequences[index] = sequence;
    items[index] = item;
  }

  private grow(): void {
    const dueAts = new Float64Array(this.dueAts.length * 2);
    dueAts.set(this.dueAts);
    this.dueAts = dueAts;
    const sequences = new Float64Array(this.sequences.length * 2);
    sequences.set(this.sequences);
    this.sequences = sequences;
  }
}
