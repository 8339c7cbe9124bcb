import { seededRandom } from "../../src/backoff/random.ts";
import type { Clock } from "../../src/clock/clock.ts";
import { DEFAULT_THREAD_POOL, ThreadPool, type ThreadPoolOptions } from "../../src/model/servers/queue.ts";

/** A thread pool for model tests: one thread, a constant 100 ms service time, seed 1, unless told otherwise. */
export function testThreadPool(clock: Clock, overrides: Partial<ThreadPoolOptions> = {}): ThreadPool {
  return new ThreadPool(clock, {
    ...DEFAULT_THREAD_POOL,
    threads: 1,
    serviceTimeMs: 100,
    cancelOnDisconnect: false,
    random: seededRandom(1),
    ...overrides,
  });
}
