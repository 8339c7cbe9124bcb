import { type TimerOwner, type WarmableOwner, warmOwner } from "./clock.ts";
import { EventHeap } from "./event-heap.ts";

/** Width of a fine bucket, in ms. */
const BUCKET_MS = 1;
/** Fine buckets per span: a span of them is sorted out of one coarse bucket at a time. */
const FINE_BITS = 8;
const FINE_BUCKETS = 1 << FINE_BITS;
const FINE_MASK = FINE_BUCKETS - 1;
/** Coarse buckets (one span each): entries due within about four minutes stay out of the heap. */
const COARSE_BUCKETS = 1024;
const COARSE_MASK = COARSE_BUCKETS - 1;
/** Beyond this bucket number, doubles stop counting in steps of one: such entries stay in the overflow heap. */
const MAX_WHEEL_BUCKET = 2 ** 52;
/** Entries per block of the buckets' storage. */
const BLOCK = 64;
/** End of a bucket's list of blocks, or of the free list. */
const NONE = -1;

function bucketOf(dueAt: number): number {
  return Math.floor(dueAt / BUCKET_MS);
}

function spanOf(bucket: number): number {
  return Math.floor(bucket / FINE_BUCKETS);
}

/**
 * A priority queue of timed entries, ordered by time and then by sequence number, as the
 * EventHeap, for millions of entries: a two-level calendar queue. A binary heap of a
 * million timers spends its time in cache misses, about twenty per pop; so would a
 * calendar of a million slots, one miss per insertion. Here an entry is appended to one
 * of the coarse buckets (256 ms each); when the clock reaches a coarse bucket, its
 * entries are spread over the fine buckets of that span (1 ms each); when it reaches a
 * fine bucket, its entries go to a small heap, which orders them exactly. Every step
 * appends to one of a few hundred lists whose ends stay in cache, or reads a list
 * front to back. Entries due beyond the coarse horizon wait in an overflow heap.
 *
 * Invariants, with `span` the coarse bucket being spread and `cursor` the fine bucket
 * being drained (both bucket numbers, growing with time): `current` holds every entry of
 * a fine bucket <= cursor; the fine lists every entry of a bucket in (cursor, fineEnd),
 * the rest of the span; the coarse lists every entry of a span in (span, span +
 * COARSE_BUCKETS); `overflow` the rest. So nothing outside `current` can come before its
 * top.
 */
export class EventQueue<T extends TimerOwner> {
  /**
   * The bucket at the cursor, sorted when it was drained: entries [runStart, runEnd) of
   * runKeys (time and sequence number side by side) and runItems. Sorting a bucket at
   * once is cheaper than passing each of its entries through a heap.
   */
  private runKeys = new Float64Array(2 * 256);
  private runItems: (T | undefined)[] = new Array<T | undefined>(256).fill(undefined);
  private runStart = 0;
  private runEnd = 0;
  /** Scratch space for sorting a run by sub-buckets. */
  private sortKeys = new Float64Array(2 * 256);
  private sortItems: (T | undefined)[] = new Array<T | undefined>(256).fill(undefined);
  private sortCounts = new Int32Array(257);
  /** Whether the top (after `ready`) is the run's front rather than the heap's. */
  private topInRun = false;
  /** Entries added for a bucket at or before the cursor after it was drained (few). */
  private readonly current = new EventHeap<T>();
  private readonly overflow = new EventHeap<T>();
  private span: number;
  private cursor: number;
  /** First fine bucket after the span, and first after the coarse horizon. */
  private fineEnd = 0;
  private coarseEnd = 0;
  /**
   * Per list, side by side: the block being filled and how many entries it holds (the
   * list's earlier blocks are full). Fine lists first, then coarse ones.
   */
  private readonly lists = new Int32Array((FINE_BUCKETS + COARSE_BUCKETS) * 2).fill(NONE);
  private inFine = 0;
  private inCoarse = 0;
  // Entries in blocks of BLOCK consecutive slots: time and sequence number side by side
  // in one typed array, the items in a parallel array. An entry costs no object. Blocks
  // are reused from a free list, most recently freed first (still in cache).
  private keys = new Float64Array(64 * BLOCK * 2);
  private items: (T | undefined)[] = new Array<T | undefined>(64 * BLOCK).fill(undefined);
  /** Per block: the list's previous block, or the next free block. */
  private blockLinks = new Int32Array(64);
  private blocksUsed = 0;
  private freeBlock = NONE;
  /** What warmOwner returned in drainFine, kept only so that the reads stay. */
  private warmth = 0;

  constructor(startMs: number) {
    this.cursor = bucketOf(startMs);
    this.span = spanOf(this.cursor);
    this.setSpan(this.span);
  }

  get size(): number {
    return this.runEnd - this.runStart + this.current.size + this.inFine + this.inCoarse + this.overflow.size;
  }

  push(dueAt: number, sequence: number, item: T): void {
    const bucket = bucketOf(dueAt);
    if (bucket <= this.cursor) {
      this.current.push(dueAt, sequence, item);
    } else if (bucket < this.fineEnd) {
      this.append(bucket & FINE_MASK, dueAt, sequence, item);
      this.inFine++;
    } else if (bucket < this.coarseEnd && bucket < MAX_WHEEL_BUCKET) {
      this.append(FINE_BUCKETS + (spanOf(bucket) & COARSE_MASK), dueAt, sequence, item);
      this.inCoarse++;
    } else {
      this.overflow.push(dueAt, sequence, item);
    }
  }

  /**
   * Brings the earliest entry to the top (advancing as far as needed) and says whether
   * there is one. Call it before the top* methods and pop, and again after any push or pop.
   */
  ready(): boolean {
    for (;;) {
      const inRun = this.runStart < this.runEnd;
      if (inRun || this.current.size > 0) {
        if (!inRun) {
          this.topInRun = false;
        } else if (this.current.size === 0) {
          this.topInRun = true;
        } else {
          const runDueAt = this.runKeys[2 * this.runStart]!;
          const heapDueAt = this.current.topDueAt();
          this.topInRun =
            runDueAt < heapDueAt || (runDueAt === heapDueAt && this.runKeys[2 * this.runStart + 1]! < this.current.topSequence());
        }
        return true;
      }
      if (this.inFine > 0) {
        // The fine lists hold only buckets before fineEnd, so this stays within the span.
        this.cursor++;
        this.drainFine(this.cursor & FINE_MASK);
      } else if (this.inCoarse > 0) {
        let span = this.span + 1;
        while (this.lists[(FINE_BUCKETS + (span & COARSE_MASK)) * 2] === NONE) span++;
        this.enterSpan(span);
      } else if (this.overflow.size > 0) {
        // Nothing within the horizon: jump to the overflow's first entry.
        const bucket = bucketOf(this.overflow.topDueAt());
        if (bucket >= MAX_WHEEL_BUCKET) {
          this.cursor = Math.max(this.cursor, bucket);
          this.pullOverflow();
        } else {
          this.enterSpan(Math.max(this.span + 1, spanOf(bucket)));
        }
      } else {
        return false;
      }
    }
    return true;
  }

  /**
   * `ready`, past the entries at the top whose owner was armed again or cancelled since: an
   * owner's clockSlot holds the sequence number of its live arming (the clocks' convention).
   */
  readyLive(): boolean {
    let live = this.ready();
    while (live && this.topItem()!.clockSlot !== this.topSequence()) {
      this.pop();
      live = this.ready();
    }
    return live;
  }

  topDueAt(): number {
    return this.topInRun ? this.runKeys[2 * this.runStart]! : this.current.topDueAt();
  }

  topSequence(): number {
    return this.topInRun ? this.runKeys[2 * this.runStart + 1]! : this.current.topSequence();
  }

  topItem(): T | undefined {
    return this.topInRun ? this.runItems[this.runStart] : this.current.topItem();
  }

  /** Removes the top entry (after `ready`). */
  pop(): void {
    if (this.topInRun) {
      this.runItems[this.runStart] = undefined;
      this.runStart++;
    } else {
      this.current.pop();
    }
  }

  private setSpan(span: number): void {
    this.span = span;
    this.fineEnd = (span + 1) * FINE_BUCKETS;
    this.coarseEnd = (span + COARSE_BUCKETS) * FINE_BUCKETS;
  }

  /** Moves to a later span (the fine lists being empty): spreads its coarse list over them. */
  private enterSpan(span: number): void {
    this.setSpan(span);
    this.cursor = span * FINE_BUCKETS - 1;
    const list = FINE_BUCKETS + (span & COARSE_MASK);
    let block = this.lists[list * 2]!;
    let fill = this.lists[list * 2 + 1]!;
    this.lists[list * 2] = NONE;
    while (block !== NONE) {
      for (let slot = block * BLOCK; slot < block * BLOCK + fill; slot++) {
        const dueAt = this.keys[slot * 2]!;
        this.append(bucketOf(dueAt) & FINE_MASK, dueAt, this.keys[slot * 2 + 1]!, this.items[slot]!);
        this.items[slot] = undefined;
      }
      this.inCoarse -= fill;
      this.inFine += fill;
      block = this.freeBlockOf(block);
      fill = BLOCK;
    }
    this.pullOverflow();
  }

  /**
   * Makes a fine bucket's live entries the run, sorted, and drops the stale ones: an
   * entry is live while its owner's clockSlot holds the entry's sequence number
   * (ManualClock's convention). Reading the owners here, in a loop of independent loads,
   * also lets the processor fetch them from memory in parallel, a millisecond before they
   * fire, rather than one cache miss at a time; so does warmOwner, for the row each live
   * owner keeps apart. The run is empty when this is called.
   */
  private drainFine(list: number): void {
    let block = this.lists[list * 2]!;
    let fill = this.lists[list * 2 + 1]!;
    if (block === NONE) return;
    this.lists[list * 2] = NONE;
    let count = 0;
    while (block !== NONE) {
      const keys = this.keys;
      const items = this.items;
      if (this.runItems.length < count + fill) this.growRun(count + fill);
      for (let slot = block * BLOCK; slot < block * BLOCK + fill; slot++) {
        const item = items[slot]!;
        const sequence = keys[slot * 2 + 1]!;
        items[slot] = undefined;
        if (item.clockSlot !== sequence) continue;
        this.warmth += warmOwner(item as WarmableOwner);
        this.runKeys[2 * count] = keys[slot * 2]!;
        this.runKeys[2 * count + 1] = sequence;
        this.runItems[count++] = item;
      }
      this.inFine -= fill;
      block = this.freeBlockOf(block);
      fill = BLOCK;
    }
    this.runStart = 0;
    this.runEnd = count;
    this.sortRun(count);
  }

  /**
   * Sorts the run's `count` entries by time, then sequence number. They all lie in one
   * bucket, spread about evenly over it: a counting sort by sub-bucket puts each near its
   * place, and an insertion sort finishes (and alone decides the order, so the sub-bucket
   * arithmetic need not be exact).
   */
  private sortRun(count: number): void {
    if (count > 16) {
      let subBuckets = 16;
      while (subBuckets < count && subBuckets < 4096) subBuckets *= 2;
      if (this.sortCounts.length < subBuckets + 1) this.sortCounts = new Int32Array(subBuckets + 1);
      if (this.sortItems.length < count) {
        this.sortKeys = new Float64Array(2 * this.runItems.length);
        this.sortItems = new Array<T | undefined>(this.runItems.length).fill(undefined);
      }
      const counts = this.sortCounts;
      counts.fill(0, 0, subBuckets + 1);
      const runKeys = this.runKeys;
      const base = this.cursor * BUCKET_MS;
      const scale = subBuckets / BUCKET_MS;
      const last = subBuckets - 1;
      for (let index = 0; index < count; index++) {
        const sub = Math.floor((runKeys[2 * index]! - base) * scale);
        counts[(sub < 0 ? 0 : sub > last ? last : sub) + 1]!++;
      }
      for (let sub = 0; sub < subBuckets; sub++) counts[sub + 1]! += counts[sub]!;
      const sortKeys = this.sortKeys;
      const sortItems = this.sortItems;
      for (let index = 0; index < count; index++) {
        const sub = Math.floor((runKeys[2 * index]! - base) * scale);
        const to = counts[sub < 0 ? 0 : sub > last ? last : sub]!++;
        sortKeys[2 * to] = runKeys[2 * index]!;
        sortKeys[2 * to + 1] = runKeys[2 * index + 1]!;
        sortItems[to] = this.runItems[index];
      }
      // Swap the sorted scratch in as the run.
      this.sortKeys = runKeys;
      this.runKeys = sortKeys;
      const runItems = this.runItems;
      this.runItems = sortItems;
      this.sortItems = runItems;
      runItems.fill(undefined, 0, count);
    }
    const keys = this.runKeys;
    const items = this.runItems;
    for (let index = 1; index < count; index++) {
      const dueAt = keys[2 * index]!;
      const sequence = keys[2 * index + 1]!;
      let to = index;
      while (to > 0 && (keys[2 * to - 2]! > dueAt || (keys[2 * to - 2] === dueAt && keys[2 * to - 1]! > sequence))) to--;
      if (to === index) continue;
      const item = items[index];
      for (let from = index; from > to; from--) {
        keys[2 * from] = keys[2 * from - 2]!;
        keys[2 * from + 1] = keys[2 * from - 1]!;
        items[from] = items[from - 1];
      }
      keys[2 * to] = dueAt;
      keys[2 * to + 1] = sequence;
      items[to] = item;
    }
  }

  private growRun(size: number): void {
    let capacity = this.runItems.length;
    while (capacity < size) capacity *= 2;
    const keys = new Float64Array(2 * capacity);
    keys.set(this.runKeys);
    this.runKeys = keys;
    const items = new Array<T | undefined>(capacity).fill(undefined);
    for (let index = 0; index < this.runItems.length; index++) items[index] = this.runItems[index];
    this.runItems = items;
  }

  /** Frees an emptied block; returns the list's previous block. */
  private freeBlockOf(block: number): number {
    const previous = this.blockLinks[block]!;
    this.blockLinks[block] = this.freeBlock;
    this.freeBlock = block;
    return previous;
  }

  private append(list: number, dueAt: number, sequence: number, item: T): void {
    const lists = this.lists;
    let block = lists[list * 2]!;
    let fill = lists[list * 2 + 1]!;
    if (block === NONE || fill === BLOCK) {
      const previous = block;
      block = this.allocateBlock();
      this.blockLinks[block] = previous;
      lists[list * 2] = block;
      fill = 0;
    }
    lists[list * 2 + 1] = fill + 1;
    const slot = block * BLOCK + fill;
    this.keys[slot * 2] = dueAt;
    this.keys[slot * 2 + 1] = sequence;
    this.items[slot] = item;
  }

  /** Moves overflow entries that the horizon now covers into the lists (or into `current`). */
  private pullOverflow(): void {
    const overflow = this.overflow;
    while (overflow.size > 0) {
      const bucket = bucketOf(overflow.topDueAt());
      if (bucket > this.cursor && (bucket >= this.coarseEnd || bucket >= MAX_WHEEL_BUCKET)) return;
      this.push(overflow.topDueAt(), overflow.topSequence(), overflow.topItem()!);
      overflow.pop();
    }
  }

  private allocateBlock(): number {
    const block = this.freeBlock;
    if (block !== NONE) {
      this.freeBlock = this.blockLinks[block]!;
      return block;
    }
    if (this.blocksUsed === this.blockLinks.length) this.growPool();
    return this.blocksUsed++;
  }

  private growPool(): void {
    const blocks = this.blockLinks.length * 2;
    const keys = new Float64Array(blocks * BLOCK * 2);
    keys.set(this.keys);
    this.keys = keys;
    // Filled, not extended by assignment, so that the array stays a packed one.
    const items = new Array<T | undefined>(blocks * BLOCK).fill(undefined);
    for (let slot = 0; slot < this.items.length; slot++) items[slot] = this.items[slot];
    this.items = items;
    const blockLinks = new Int32Array(blocks);
    blockLinks.set(this.blockLinks);
    this.blockLinks = blockLinks;
  }
}
