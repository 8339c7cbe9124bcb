// The generator alone: the package's index loads every generator and distribution (4 MB of a server at rest).
import { xoroshiro128plus } from "pure-rand/generator/XoroShiro";

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
  return new GeneratorRandom(xoroshiro128plus(scrambleSeed(seed)));
}

/**
 * Stream `stream` of `seed`: one of many independent sequences of one seed, e.g. one per
 * simulated user, so that a user's draws do not depend on which process or thread runs it,
 * nor on the order in which other users' events happen. The generator's 128-bit state is
 * hashed from both numbers (4 words, each a differently salted murmur3 finalizer), so
 * neighbouring streams are unrelated and two streams share a state with negligible chance.
 */
export function streamRandom(seed: number, stream: number): Random {
  const low = (stream % 2 ** 32) | 0;
  const high = Math.floor(stream / 2 ** 32) | 0;
  const word = (salt: number) => scrambleSeed(scrambleSeed(scrambleSeed(seed ^ salt) ^ low) ^ high);
  const state = [word(0x9e37_79b9), word(0x7f4a_7c15), word(0x85eb_ca77), word(0xc2b2_ae3d)];
  // xoroshiro's one forbidden state: all zero.
  if ((state[0]! | state[1]! | state[2]! | state[3]!) === 0) state[0] = 1;
  return new GeneratorRandom(xoroshiro128plus.fromState(state));
}

/**
 * A Random drawing from one generator. A class rather than closures: one small object per
 * generator, which matters when every simulated user has its own stream.
 */
class GeneratorRandom implements Random {
  private readonly generator: ReturnType<typeof xoroshiro128plus>;
  private spareNormal: number | undefined = undefined;

  constructor(generator: ReturnType<typeof xoroshiro128plus>) {
    this.generator = generator;
    // xoroshiro128+ seeded from 32 bits starts from a sparse state; its first outputs are
    // poorly mixed (seed 5 gave 0.99999999985). Discard a warm-up before the first draw.
    for (let index = 0; index < WARM_UP_OUTPUTS; index++) generator.unsafeNext();
  }

  uniform(): number {
    // 53 random bits from two 32-bit outputs: 27 high + 26 low, as in pure-rand's uniformFloat64.
    const high = (this.generator.unsafeNext() >>> 5) * 67_108_864;
    const low = this.generator.unsafeNext() >>> 6;
    return (high + low) / TWO_POW_53;
  }

  uniformInt(maxExclusive: number): number {
    return Math.floor(this.uniform() * maxExclusive);
  }

  exponential(mean: number): number {
    // 1 - u lies in (0, 1], so the logarithm is finite.
    return -mean * Math.log(1 - this.uniform());
  }

  normal(mean: number, standardDeviation: number): number {
    let standard: number;
    if (this.spareNormal !== undefined) {
      standard = this.spareNormal;
      this.spareNormal = undefined;
    } else {
      const radius = Math.sqrt(-2 * Math.log(1 - this.uniform()));
      const angle = 2 * Math.PI * this.uniform();
      standard = radius * Math.cos(angle);
      this.spareNormal = radius * Math.sin(angle);
    }
    return mean + standardDeviation * standard;
  }
}
