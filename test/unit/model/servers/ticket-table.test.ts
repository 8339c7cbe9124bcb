import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../../src/backoff/random.ts";
import { TicketTable } from "../../../../src/model/servers/ticket-table.ts";

interface Entry {
  readonly ticket: number;
}

/** Random adds, lookups and deletions on the table and on a Map alike; `keepOldest` keeps early entries long (a lifo queue's bottom). */
function check(seed: number, steps: number, keepOldest: boolean): number {
  const random = seededRandom(seed);
  const table = new TicketTable<Entry>();
  const map = new Map<number, Entry>();
  /** Tickets held, in order. */
  const held: number[] = [];
  let next = 0;
  let mostHeld = 0;
  let agrees = true;
  for (let step = 0; step < steps; step++) {
    const draw = random.uniform();
    if (draw < 0.5 || map.size === 0) {
      const entry = { ticket: next };
      next += random.uniform() < 0.1 ? 3 : 1;
      table.add(entry);
      map.set(entry.ticket, entry);
      held.push(entry.ticket);
    } else {
      // Mostly among the oldest few (fifo), sometimes any; with keepOldest, the first 50 only by the latter.
      const from = keepOldest ? Math.min(50, held.length - 1) : 0;
      const index =
        draw < 0.9 ? from + Math.floor(random.uniform() * Math.min(5, held.length - from)) : Math.floor(random.uniform() * held.length);
      const ticket = held.splice(index, 1)[0]!;
      agrees &&= table.get(ticket) === map.get(ticket);
      table.delete(ticket);
      map.delete(ticket);
    }
    const probe = Math.floor(random.uniform() * (next + 10));
    agrees &&= table.get(probe) === map.get(probe) && table.size === map.size;
    mostHeld = Math.max(mostHeld, map.size);
  }
  expect(agrees).toBe(true);
  expect(table.values()).toEqual([...map.values()]);
  table.clear();
  expect(table.size).toBe(0);
  expect(table.get(0)).toBeUndefined();
  return mostHeld;
}

describe("TicketTable", () => {
  it("finds, deletes and lists entries as a Map does, oldest removed first", () => {
    check(1, 20_000, false);
  });

  it("does so too when the oldest entries stay while thousands come and go after them", () => {
    expect(check(2, 20_000, true)).toBeGreaterThan(50);
  });

  it("takes new entries again after clear", () => {
    const table = new TicketTable<Entry>();
    table.add({ ticket: 0 });
    table.clear();
    const entry = { ticket: 1 };
    table.add(entry);
    expect(table.get(1)).toBe(entry);
    expect(table.values()).toEqual([entry]);
  });
});
