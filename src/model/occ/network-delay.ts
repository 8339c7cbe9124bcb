import type { Random } from "../../backoff/random.ts";

/**
 * One-way network delay of the blog's simulator: |normal(mean, sd)| ms per message, drawn
 * for every request and every answer (its `Net`, mean 10 ms, sd 2 ms).
 */
export interface NetworkDelay {
  readonly meanMs: number;
  readonly sdMs: number;
}

/** The blog simulator's `Net(10, 2)`. */
export const BLOG_NETWORK: NetworkDelay = { meanMs: 10, sdMs: 2 };

export function drawNetworkDelay(network: NetworkDelay, random: Random): number {
  return network.sdMs === 0 ? Math.abs(network.meanMs) : Math.abs(random.normal(network.meanMs, network.sdMs));
}
