import { describe, expect, it } from "vitest";
import { median } from "../../../src/model/percentile.ts";

describe("median", () => {
  it("is the nearest-rank median of values in any order, without reordering them; none of none", () => {
    const values = [72.9, 61.6, 74.7];
    expect(median(values)).toBe(72.9);
    expect(values).toEqual([72.9, 61.6, 74.7]);
    // Nearest rank: of two, the lower; never an average.
    expect(median([47.4, 45.5])).toBe(45.5);
    expect(median([])).toBeUndefined();
  });
});
