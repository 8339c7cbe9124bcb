import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../../src/backoff/random.ts";
import { RequestSlots } from "../../../../src/model/servers/request-slots.ts";

/** What a request was added with: every field derives from its ticket, so that a moved or mixed-up one shows. */
function fieldsOf(ticket: number): { arrivedAt: number; deadlineAt: number; context: { ticket: number } } {
  return { arrivedAt: ticket * 1.5, deadlineAt: ticket + 0.25, context: { ticket } };
}

function readBack(slots: RequestSlots, ticket: number): unknown {
  const slot = slots.slotOf(ticket);
  if (slot < 0) return undefined;
  return {
    ticket: slots.tickets[slot],
    arrivedAt: slots.arrivedAt[slot],
    deadlineAt: slots.deadlineAt[slot],
    flags: slots.flags[slot],
    context: slots.contexts[slot],
  };
}

/**
 * Random adds, lookups and removals on the slots and on a Map alike; `keepOldest` keeps early
 * requests long (a lifo queue's bottom), which sends them to the overflow. Returns the most held.
 */
function check(seed: number, steps: number, keepOldest: boolean): number {
  const random = seededRandom(seed);
  const slots = new RequestSlots();
  const map = new Map<number, unknown>();
  /** Tickets held, in order. */
  const held: number[] = [];
  let next = 0;
  let mostHeld = 0;
  let agrees = true;
  for (let step = 0; step < steps; step++) {
    const draw = random.uniform();
    if (draw < 0.5 || map.size === 0) {
      const ticket = next;
      next += random.uniform() < 0.1 ? 3 : 1;
      const { arrivedAt, deadlineAt, context } = fieldsOf(ticket);
      const slot = slots.add(ticket, arrivedAt, deadlineAt, undefined, context);
      // The pool's flags for it, written at the slot add returned, come back wherever it moves.
      slots.flags[slot] = ticket % 4;
      map.set(ticket, { ticket, arrivedAt, deadlineAt, flags: ticket % 4, context });
      held.push(ticket);
    } else {
      // Mostly among the oldest few (fifo), sometimes any; with keepOldest, the first 50 only by the latter.
      const from = keepOldest ? Math.min(50, held.length - 1) : 0;
      const index =
        draw < 0.9 ? from + Math.floor(random.uniform() * Math.min(5, held.length - from)) : Math.floor(random.uniform() * held.length);
      const ticket = held.splice(index, 1)[0]!;
      agrees &&= JSON.stringify(readBack(slots, ticket)) === JSON.stringify(map.get(ticket));
      const slot = slots.slotOf(ticket);
      slots.remove(slot);
      // Nothing of it is kept alive.
      agrees &&= slots.contexts[slot] === undefined && slots.callbacks[slot] === undefined;
      map.delete(ticket);
    }
    const probe = Math.floor(random.uniform() * (next + 10));
    agrees &&= JSON.stringify(readBack(slots, probe)) === JSON.stringify(map.get(probe)) && slots.size === map.size;
    mostHeld = Math.max(mostHeld, map.size);
  }
  expect(agrees).toBe(true);
  expect(slots.slotsInTicketOrder().map((slot) => slots.tickets[slot])).toEqual([...map.keys()]);
  slots.clear();
  expect(slots.size).toBe(0);
  expect(slots.slotOf(0)).toBe(-1);
  return mostHeld;
}

describe("RequestSlots", () => {
  it("finds, removes and lists requests as a Map does, oldest removed first", () => {
    check(1, 20_000, false);
  });

  it("does so too when the oldest requests stay while thousands come and go after them", () => {
    expect(check(2, 20_000, true)).toBeGreaterThan(50);
  });

  it("keeps a hundred requests aside, past its first overflow region, while newer ones hold their ring slots", () => {
    const slots = new RequestSlots();
    // 0–99 stay; 100–1023 go at once, so that the ring never fills; 1024–1199 take the ring
    // slots of 0–99, which move aside, more of them than the overflow first has room for.
    const kept: number[] = [];
    for (let ticket = 0; ticket < 1200; ticket++) {
      const { arrivedAt, deadlineAt, context } = fieldsOf(ticket);
      const slot = slots.add(ticket, arrivedAt, deadlineAt, undefined, context);
      if (ticket < 100 || ticket >= 1024) kept.push(ticket);
      else slots.remove(slot);
    }
    expect(slots.size).toBe(kept.length);
    for (const ticket of kept) {
      const { arrivedAt, deadlineAt, context } = fieldsOf(ticket);
      expect(readBack(slots, ticket)).toEqual({ ticket, arrivedAt, deadlineAt, flags: 0, context });
    }
    expect(slots.slotsInTicketOrder().map((slot) => slots.tickets[slot])).toEqual(kept);
    // The newer ones are in the ring, side by side.
    expect(slots.slotOf(1025) - slots.slotOf(1024)).toBe(1);
  });

  it("takes new requests again after clear", () => {
    const slots = new RequestSlots();
    slots.add(0, 0, Infinity, undefined, "a");
    slots.clear();
    const slot = slots.add(1, 2, Infinity, undefined, "b");
    expect(slots.slotOf(1)).toBe(slot);
    expect(slots.slotOf(0)).toBe(-1);
    expect(slots.contexts[slot]).toBe("b");
    expect(slots.slotsInTicketOrder()).toEqual([slot]);
  });
});
