/*
 * A shard's label, `i/n`: the client's -shard flag reads it and writes it on each -json line,
 * and merge reads it back from there, with the same rules on both sides.
 */

/** Shard `index` of `count`: one process's share of a herd split over several. */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

export const MAX_SHARDS = 1_000_000;

/** Parses `i/n` (0 <= i < n <= MAX_SHARDS); throws a message for the flag otherwise. */
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
