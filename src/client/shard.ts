/** Shard `index` of `count`: one process's share of a herd split over several. */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/** A run of users by their number in the whole herd: `firstUser` up to `firstUser + users`. */
export interface UserRange {
  readonly firstUser: number;
  readonly users: number;
}

const MAX_SHARDS = 1_000_000;

/** Parses `i/n` (0 <= i < n); throws a message for the flag otherwise. */
export function parseShard(text: string): Shard {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  if (match === null) throw new Error("must be i/n, e.g. 0/4 for the first of four shards");
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1 || count > MAX_SHARDS) throw new Error(`the shard count must be 1 to ${MAX_SHARDS}`);
  if (index >= count) throw new Error(`the shard index must be 0 to ${count - 1}`);
  return { index, count };
}

export function shardProblem(text: string): string | undefined {
  try {
    parseShard(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
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
