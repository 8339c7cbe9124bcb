import { describe, expect, it } from "vitest";
import { parseShard, partOf, shardProblem } from "../../../src/client/shard.ts";

describe("shards", () => {
  it("parses i/n", () => {
    expect(parseShard("0/1")).toEqual({ index: 0, count: 1 });
    expect(parseShard("3/4")).toEqual({ index: 3, count: 4 });
    expect(shardProblem("4/4")).toBe("the shard index must be 0 to 3");
    expect(shardProblem("0/0")).toBe("the shard count must be 1 to 1000000");
    expect(shardProblem("1")).toContain("must be i/n");
    expect(shardProblem("-1/2")).toContain("must be i/n");
  });

  it.each([
    [1000, 4],
    [10, 3],
    [2, 5],
    [1, 1],
    [7, 7],
  ])("splits %i users in %i parts covering each user exactly once, sizes within one", (users, count) => {
    const parts = Array.from({ length: count }, (_, index) => partOf({ firstUser: 100, users }, index, count));
    const covered = parts.flatMap((part) => Array.from({ length: part.users }, (_, offset) => part.firstUser + offset));
    expect(covered).toEqual(Array.from({ length: users }, (_, offset) => 100 + offset));
    const sizes = parts.map((part) => part.users);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
  });
});
