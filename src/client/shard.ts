export { parseShard, type Shard, shardProblem } from "../contracts/shard-label.ts";

/** A run of users by their number in the whole herd: `firstUser` up to `firstUser + users`. */
export interface UserRange {
  readonly firstUser: number;
  readonly users: number;
}

/**
 * Part `index` of `count` of a range: consecutive users, the sizes differing by at most one.
 * The parts of all indices cover the range exactly once, which is what lets shards and
 * worker threads together run the same users as one process.
 */
export function partOf(range: UserRange, index: number, count: number): UserRange {
  const from = range.firstUser + Math.floor((index * range.users) / count);
  const to = range.firstUser + Math.floor(((index + 1) * range.users) / count);
  return { firstUser: from, users: to - from };
}
