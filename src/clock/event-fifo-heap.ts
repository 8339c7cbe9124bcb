import { EventHeap } from "./event-heap.ts";

const INITIAL_CAPACITY = 1024;

/**
 * The EventHeap's queue (entries ordered by time, then sequence number), for entries that
 * mostly arrive in that order: a thread pool's completions with a constant service time, a
 * server's request deadlines (arrival plus one timeout). An entry that comes after the last
 * one appended goes to the back of a FIFO ring, at the cost of a queue; any other goes to
 * a heap beside it; the top is the earlier of the two fronts. Entries come out in exactly
 * the heap's order, at a fraction of its cost when they arrive in order. An entry is its key
 * alone: its users find what it stands for by its sequence number (a ticket).
 */
export class EventFifoHeap {
  private dueAts = new Float64Array(INITIAL_CAPACITY);
  private sequences = new Float64Array(INITIAL_CAPACITY);
  /** Index of the ring's front; the capacity is a power of two, so indices wrap with a mask. */
  private head = 0;
  private ringSize = 0;
  /** The key of the ring's back entry, while it has one. */
  private backDueAt = 0;
  private backSequence = 0;
  private readonly heap = new EventHeap<undefined>();
  /** Whether the top is the ring's front rather than the heap's top (meaningful when size > 0). */
  private topInRing = false;

  get size(): number {
    return this.ringSize + this.heap.size;
  }

  /** The top entry's time; only meaningful when size > 0. */
  topDueAt(): number {
    return this.topInRing ? this.dueAts[this.head]! : this.heap.topDueAt();
  }

  /** The top entry's sequence number; only meaningful when size > 0. */
  topSequence(): number {
    return this.topInRing ? this.sequences[this.head]! : this.heap.topSequence();
  }

  push(dueAt: number, sequence: number): void {
    if (this.ringSize > 0 && (dueAt < this.backDueAt || (dueAt === this.backDueAt && sequence < this.backSequence))) {
      this.heap.push(dueAt, sequence, undefined);
    } else {
      if (this.ringSize === this.dueAts.length) this.grow();
      const index = (this.head + this.ringSize) & (this.dueAts.length - 1);
      this.dueAts[index] = dueAt;
      this.sequences[index] = sequence;
      this.ringSize++;
      this.backDueAt = dueAt;
      this.backSequence = sequence;
    }
    this.findTop();
  }

  /**
   * The sequence number of the entry `offset` places behind the FIFO ring's front (undefined
   * beyond its back): for a caller that reads ahead what will come out of the queue soon.
   * Entries in the heap are not counted; with entries arriving in order there are none.
   */
  ringSequenceAhead(offset: number): number | undefined {
    return offset < this.ringSize ? this.sequences[(this.head + offset) & (this.dueAts.length - 1)] : undefined;
  }

  /** Removes the top entry. */
  pop(): void {
    if (this.topInRing) {
      this.head = (this.head + 1) & (this.dueAts.length - 1);
      this.ringSize--;
    } else {
      this.heap.pop();
    }
    this.findTop();
  }

  /** Removes every entry. */
  clear(): void {
    this.head = 0;
    this.ringSize = 0;
    while (this.heap.size > 0) this.heap.pop();
    this.topInRing = false;
  }

  private findTop(): void {
    if (this.ringSize === 0) {
      this.topInRing = false;
    } else if (this.heap.size === 0) {
      this.topInRing = true;
    } else {
      const ringDueAt = this.dueAts[this.head]!;
      const heapDueAt = this.heap.topDueAt();
      this.topInRing = ringDueAt < heapDueAt || (ringDueAt === heapDueAt && this.sequences[this.head]! < this.heap.topSequence());
    }
  }

  private grow(): void {
    const capacity = this.dueAts.length;
    const dueAts = new Float64Array(capacity * 2);
    const sequences = new Float64Array(capacity * 2);
    for (let offset = 0; offset < this.ringSize; offset++) {
      const from = (this.head + offset) & (capacity - 1);
      dueAts[offset] = this.dueAts[from]!;
      sequences[offset] = this.sequences[from]!;
    }
    this.dueAts = dueAts;
    this.sequences = sequences;
    this.head = 0;
  }
}
