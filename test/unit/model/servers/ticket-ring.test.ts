import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../../src/backoff/random.ts";
import { drawsInjectedError } from "../../../../src/model/servers/error-injection.ts";
import { moveTickets } from "../../../../src/model/servers/ticket-ring.ts";

describe("moveTickets", () => {
  it("moves the tickets held, wrapped around the ring's end, to their slots in a ring twice the size", () => {
    // Tickets 6..9 in a ring of 4: slots 2, 3, 0, 1.
    const ring = new Float64Array([8, 9, 6, 7]);
    const moved = moveTickets(ring, new Float64Array(8), 6, 10);
    expect([...moved]).toEqual([8, 9, 0, 0, 0, 0, 6, 7]);
    const names = moveTickets<string | undefined, (string | undefined)[]>(
      ["t8", "t9", "t6", "t7"],
      new Array<string | undefined>(8).fill(undefined),
      6,
      10,
    );
    expect(names).toEqual(["t8", "t9", undefined, undefined, undefined, undefined, "t6", "t7"]);
  });
});

describe("drawsInjectedError", () => {
  it("draws one number a call while a rate is on, and none without one, so that every model spends them alike", () => {
    const random = seededRandom(3);
    const twin = seededRandom(3);
    expect(drawsInjectedError(undefined, 0.5)).toBe(false);
    expect(drawsInjectedError({ rate: 0, random }, undefined)).toBe(false);
    expect(drawsInjectedError({ rate: 0.5, random }, 0)).toBe(false);
    const drawn = [0, 1, 2, 3, 4, 5, 6, 7].map(() => drawsInjectedError({ rate: 0, random }, 0.5));
    expect(drawn).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map(() => twin.uniform() < 0.5));
    expect(drawsInjectedError({ rate: 1, random }, undefined)).toBe(true);
  });
});
