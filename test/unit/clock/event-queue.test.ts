import { describe, expect, it } from "vitest";
import type { TimerOwner } from "../../../src/clock/clock.ts";
import { EventQueue } from "../../../src/clock/event-queue.ts";
import { warmProbe } from "../../helpers/warm-probe.ts";

/** An entry as the manual clock makes them: live while its clockSlot holds its sequence number. */
interface Entry extends TimerOwner {
  readonly dueAt: number;
  readonly sequence: number;
}

function entry(dueAt: number, sequence: number): Entry {
  return { dueAt, sequence, clockSlot: sequence, onTimer: () => {} };
}

/** Pops every live entry with dueAt <= limit, in order. */
function drain(queue: EventQueue<Entry>, limit = Infinity): Entry[] {
  const out: Entry[] = [];
  let keysMatch = true;
  while (queue.ready() && queue.topDueAt() <= limit) {
    const top = queue.topItem()!;
    keysMatch &&= top.dueAt === queue.topDueAt() && top.sequence === queue.topSequence();
    queue.pop();
    if (top.clockSlot === top.sequence) out.push(top);
  }
  expect(keysMatch).toBe(true);
  return out;
}

const byTimeThenSequence = (a: Entry, b: Entry) => a.dueAt - b.dueAt || a.sequence - b.sequence;
const sequenceOf = (added: Entry) => added.sequence;

describe("EventQueue", () => {
  it("gives entries back by time, then by sequence number, from the fine and coarse buckets and the overflow", () => {
    const queue = new EventQueue<Entry>(0);
    const entries: Entry[] = [];
    let state = 7;
    const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let sequence = 0; sequence < 20_000; sequence++) {
      // Within a millisecond, within a span, across the coarse horizon (~4 min), beyond it, far beyond.
      const scales = [1, 200, 30_000, 600_000, 1e12];
      const dueAt = Math.floor(next() * 4) === 0 ? 5 : next() * scales[sequence % scales.length]!;
      const added = entry(dueAt, sequence);
      entries.push(added);
      queue.push(added.dueAt, added.sequence, added);
    }
    expect(queue.size).toBe(entries.length);
    expect(drain(queue).map(sequenceOf)).toEqual([...entries].sort(byTimeThenSequence).map(sequenceOf));
    expect(queue.size).toBe(0);
    expect(queue.ready()).toBe(false);
  });

  it("keeps the order when entries are added as time goes on, including into the bucket being drained", () => {
    const queue = new EventQueue<Entry>(0);
    const expected: Entry[] = [];
    const popped: Entry[] = [];
    let sequence = 0;
    let now = 0;
    let state = 99;
    const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const add = (delay: number) => {
      const added = entry(now + delay, sequence++);
      expected.push(added);
      queue.push(added.dueAt, added.sequence, added);
    };
    for (let index = 0; index < 2_000; index++) add(next() * 20_000);
    while (queue.ready()) {
      const top = queue.topItem()!;
      queue.pop();
      now = top.dueAt;
      popped.push(top);
      // As a clock's callbacks do: a timer due now, one a fraction of a millisecond later, longer ones.
      if (popped.length < 30_000) {
        if (popped.length % 7 === 0) add(0);
        if (popped.length % 5 === 0) add(next() * 0.5);
        add(next() * (popped.length % 3 === 0 ? 300 : 20_000));
      }
    }
    expect(popped.map(sequenceOf)).toEqual([...expected].sort(byTimeThenSequence).map(sequenceOf));
  });

  it("drops entries whose owner was re-armed or cancelled when their bucket comes up", () => {
    const queue = new EventQueue<Entry>(0);
    const kept = entry(10.5, 0);
    const cancelled = entry(10.25, 1);
    const moved = entry(400, 2);
    for (const added of [kept, cancelled, moved]) queue.push(added.dueAt, added.sequence, added);
    cancelled.clockSlot = -1;
    moved.clockSlot = 3;
    expect(drain(queue)).toEqual([kept]);
    expect(queue.size).toBe(0);
  });

  it("has each live owner warm what it keeps elsewhere before its bucket's first entry comes out, and no stale one", () => {
    const queue = new EventQueue<Entry>(0);
    const warmed: number[] = [];
    const warmable = (dueAt: number, sequence: number): Entry => ({ ...entry(dueAt, sequence), ...warmProbe(() => warmed.push(sequence)) });
    const live = [warmable(10.75, 0), warmable(10.25, 1), warmable(700, 2)];
    const stale = warmable(10.5, 3);
    for (const added of [...live, stale]) queue.push(added.dueAt, added.sequence, added);
    stale.clockSlot = -1;
    expect(queue.ready()).toBe(true);
    expect(queue.topItem()).toBe(live[1]);
    expect(warmed.sort()).toEqual([0, 1]); // the bucket of 10 ms, before anything came out; 700 ms's later
    expect(drain(queue).map(sequenceOf)).toEqual([1, 0, 2]);
    expect(warmed.sort()).toEqual([0, 1, 2]);
  });

  it("works from a negative start time and after a jump over an empty horizon", () => {
    const queue = new EventQueue<Entry>(-1_000.5);
    const entries = [entry(-999, 0), entry(-1_000.25, 1), entry(5e9, 2), entry(5e9 + 0.5, 3), entry(1e300, 4)];
    for (const added of entries) queue.push(added.dueAt, added.sequence, added);
    expect(drain(queue, 0)).toEqual([entries[1], entries[0]]);
    expect(drain(queue, 5e9 + 1)).toEqual([entries[2], entries[3]]);
    const late = entry(5e9 + 2, 5);
    queue.push(late.dueAt, late.sequence, late);
    expect(drain(queue)).toEqual([late, entries[4]]);
  });
});
