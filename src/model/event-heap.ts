/**
 * A binary min-heap of timed events, ordered by time and then by insertion order, so
 * events due at the same instant run first-in first-out. Used by the manual clock that
 * drives tests and the simulator, where it holds up to millions of entries: the heap
 * stores plain objects and removes cancelled ones lazily.
 */
export interface HeapEvent {
  readonly dueAt: number;
  readonly sequence: number;
}

export class EventHeap<T extends HeapEvent> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let index = items.length - 1;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = items[parentIndex]!;
      if (!before(item, parent)) break;
      items[index] = parent;
      index = parentIndex;
    }
    items[index] = item;
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    let index = 0;
    const length = items.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      let child = left;
      if (right < length && before(items[right]!, items[left]!)) child = right;
      if (!before(items[child]!, last)) break;
      items[index] = items[child]!;
      index = child;
    }
    items[index] = last;
    return top;
  }
}

function before(a: HeapEvent, b: HeapEvent): boolean {
  return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.sequence < b.sequence);
}
