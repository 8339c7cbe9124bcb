import type { Clock } from "../clock/clock.ts";
import type { RetryConfig } from "./client-loop.ts";
import type { HerdObserver, Transport } from "./attempt.ts";
import { Herd, type HerdRandom } from "./herd.ts";
import { OpenLoop } from "./open-loop.ts";

/**
 * The most open-loop arrivals per second (-rate, with any spike's factor), for the client and
 * the simulator alike: what the simulator's most clients, 10 000 000, send at the default
 * lambda of 10 s. Each arrival is an event of the simulator's, so that a faster rate would run
 * for hours; a real client sends far fewer.
 */
export const MAX_ARRIVAL_RATE = 1_000_000;

/** How requests are offered: closed users (-clients, -lambda) or open-loop arrivals. */
export type Arrivals = { readonly kind: "closed" } | { readonly kind: "open"; readonly ratePerSec: number; readonly maxChains: number };

export interface LoadOptions {
  /** Closed users: how many. */
  readonly users: number;
  /** Closed users: the first user's number in the whole herd, when this load is one share of it. */
  readonly firstUser?: number;
  /** Closed users when undefined. */
  readonly arrivals?: Arrivals | undefined;
  readonly timeoutMs: number;
  readonly retry: RetryConfig;
}

/**
 * The source of load, for the real client and the simulator alike: N closed users or an
 * open-loop arrival process, on the same clock, transport and statistics. With a random per
 * user (`randomFor`), the open-loop source draws from user `firstUser`'s stream: its
 * arrivals are one process, not users.
 */
export function createLoad(
  options: LoadOptions,
  clock: Clock,
  random: HerdRandom,
  transport: Transport,
  observer: HerdObserver,
): Herd | OpenLoop {
  const arrivals = options.arrivals;
  if (arrivals?.kind === "open") {
    const sourceRandom = "randomFor" in random ? random.randomFor(options.firstUser ?? 0) : random;
    return new OpenLoop(clock, sourceRandom, transport, observer, {
      ratePerSec: arrivals.ratePerSec,
      timeoutMs: options.timeoutMs,
      retry: options.retry,
      maxChains: arrivals.maxChains,
    });
  }
  return new Herd(clock, random, transport, observer, {
    users: options.users,
    ...(options.firstUser === undefined ? {} : { firstUser: options.firstUser }),
    timeoutMs: options.timeoutMs,
    retry: options.retry,
  });
}
