/**
 * The seed of a spike's extra users: a stream of its own per fault (by its index in the
 * schedule), apart from the herd's, the same in the simulator and in the demo's extra client.
 */
export function spikeSeed(seed: number, index: number): number {
  return (seed ^ (0x2545f491 + index * 0x9e3779b9)) & 0x7fffffff;
}
