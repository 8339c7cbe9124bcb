import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../src/backoff/random.ts";
import { EventFifoHeap } from "../../../src/clock/event-fifo-heap.ts";
import { EventHeap } from "../../../src/clock/event-heap.ts";

type Queue = EventFifoHeap | EventHeap<undefined>;

/** Pushes and pops on both queues alike; returns what each gave out, as [dueAt, sequence] pairs (sequence numbers are unique). */
function run(seed: number, steps: number, dueOf: (now: number, draw: () => number) => number): [number[][], number[][]] {
  const random = seededRandom(seed);
  const fifoHeap = new EventFifoHeap();
  const heap = new EventHeap<undefined>();
  const out: [number[][], number[][]] = [[], []];
  const take = (queue: Queue, into: number[][]) => {
    into.push([queue.topDueAt(), queue.topSequence()]);
    queue.pop();
  };
  let now = 0;
  for (let sequence = 0; sequence < steps; sequence++) {
    if (random.uniform() < 0.55) {
      const dueAt = dueOf(now, () => random.uniform());
      fifoHeap.push(dueAt, sequence);
      heap.push(dueAt, sequence, undefined);
    } else if (heap.size > 0) {
      now = heap.topDueAt();
      take(fifoHeap, out[0]);
      take(heap, out[1]);
    }
    expect(fifoHeap.size).toBe(heap.size);
  }
  while (heap.size > 0) {
    take(fifoHeap, out[0]);
    take(heap, out[1]);
  }
  expect(fifoHeap.size).toBe(0);
  return out;
}

describe("EventFifoHeap", () => {
  it("gives entries out in the heap's order when they come in order (a constant delay)", () => {
    const [fifoHeap, heap] = run(1, 5000, (now) => now + 100);
    expect(fifoHeap).toEqual(heap);
    expect(fifoHeap.length).toBeGreaterThan(2000);
  });

  it("gives entries out in the heap's order when they come in any order, with ties in time", () => {
    const [fifoHeap, heap] = run(2, 5000, (now, draw) => now + Math.floor(draw() * 4) * 50);
    expect(fifoHeap).toEqual(heap);
  });

  it("gives entries out in the heap's order for a mix of in-order and out-of-order entries", () => {
    const [fifoHeap, heap] = run(3, 5000, (now, draw) => now + (draw() < 0.8 ? 100 : draw() * 300));
    expect(fifoHeap).toEqual(heap);
  });

  it("is empty after clear and keeps working", () => {
    const queue = new EventFifoHeap();
    queue.push(5, 0);
    queue.push(1, 1);
    queue.clear();
    expect(queue.size).toBe(0);
    queue.push(3, 2);
    queue.push(2, 3);
    expect([queue.topDueAt(), queue.topSequence()]).toEqual([2, 3]);
    queue.pop();
    expect([queue.topDueAt(), queue.topSequence()]).toEqual([3, 2]);
  });

  it("shows the sequence numbers that come out of its FIFO ring next, across the ring's wrap and growth", () => {
    const queue = new EventFifoHeap();
    for (let item = 0; item < 1000; item++) queue.push(item, item + 10_000);
    for (let item = 0; item < 900; item++) queue.pop(); // the front is near the ring's end now
    for (let item = 1000; item < 2100; item++) queue.push(item, item + 10_000); // wraps, then grows
    queue.push(0.5, 5000); // before the back: into the heap, not the ring
    expect([0, 1, 150, 1199].map((offset) => queue.ringSequenceAhead(offset))).toEqual([10_900, 10_901, 11_050, 12_099]);
    expect(queue.ringSequenceAhead(1200)).toBeUndefined();
    expect([queue.topDueAt(), queue.topSequence()]).toEqual([0.5, 5000]);
  });
});
