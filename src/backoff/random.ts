import { xoroshiro128plus } from "pure-rand";

/**
 * Randomness as an argument: models draw from a Random they are given, so a seed makes
 * every schedule reproducible. Distributions are kept apart from the generator.
 */
export interface Random {
  /** Uniform on [0, 1). */
  uniform(): number;
  /** Uniform integer on [0, maxExclusive). */
  uniformInt(maxExclusive: number): number;
  /** Exponentially distributed with the given mean (inverse-CDF method). */
  exponential(mean: number): number;
  /** Normally distributed (Box–Muller). */
  normal(mean: number, standardDeviation: number): number;
}

const TWO_POW_53 = 2 ** 53;
const WARM_UP_OUTPUTS = 16;

/** murmur3's 32-bit finalizer: nearby seeds (1, 2, 3…) become unrelated generator states. */
function scrambleSeed(seed: number): number {
  let hash = seed | 0;
  hash = Math.imul(hash ^ (hash >>> 16), 0x85eb_ca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2_ae35);
  return (hash ^ (hash >>> 16)) | 0;
}

/**
 * A seeded Random on pure-rand's xoroshiro128+; the same seed gives the same sequence.
 * Seeds are 32-bit integers (callers validate them at the edge).
 */
export function seededRandom(seed: number): Random {
  const generator = xoroshiro128plus(scrambleSeed(seed));
  // xoroshiro128+ seeded from 32 bits starts from a sparse state; its first outputs are
  // poorly mixed (seed 5 gave 0.99999999985). Discard a warm-up before the first draw.
  for (let index = 0; index < WARM_UP_OUTPUTS; index++) generator.unsafeNext();
  let spareNormal: number | undefined;

  const uniform = (): number => {
    // 53 random bits from two 32-bit outputs: 27 high + 26 low, as in pure-rand's uniformFloat64.
    const high = (generator.unsafeNext() >>> 5) * 67_108_864;
    const low = generator.unsafeNext() >>> 6;
    return (high + low) / TWO_POW_53;
  };

  return {
    uniform,
    uniformInt(maxExclusive: number): number {
      return Math.floor(uniform() * maxExclusive);
    },
    exponential(mean: number): number {
      // 1 - u lies in (0, 1], so the logarithm is finite.
      return -mean * Math.log(1 - uniform());
    },
    normal(mean: number, standardDeviation: number): number {
      let standard: number;
      if (spareNormal !== undefined) {
        standard = spareNormal;
        spareNormal = undefined;
      } else {
        const radius = Math.sqrt(-2 * Math.log(1 - uniform()));
        const angle = 2 * Math.PI * uniform();
        standard = radius * Math.cos(angle);
        spareNormal = radius * Math.sin(angle);
      }
      return mean + standardDeviation * standard;
    },
  };
}
