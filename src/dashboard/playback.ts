import type { Clock } from "../clock/clock.ts";

export interface TimedEvent<E> {
  /** When it happened, ms of the recorded (or simulated) time. */
  readonly atMs: number;
  readonly event: E;
}

/**
 * Plays recorded events back in order at `speed` times their pace: an event at `atMs`
 * is delivered `atMs / speed` after the start. One timer at a time, so a long run costs
 * no more than a short one. Resolves after the last event, or at once when aborted.
 */
export function playBack<E>(
  clock: Clock,
  events: readonly TimedEvent<E>[],
  speed: number,
  deliver: (event: E) => void,
  signal?: AbortSignal,
): Promise<void> {
  const ordered = [...events].sort((a, b) => a.atMs - b.atMs);
  const startMs = clock.now();
  return new Promise((resolve) => {
    let next = 0;
    const step = () => {
      while (next < ordered.length && !signal?.aborted) {
        const dueInMs = startMs + ordered[next]!.atMs / speed - clock.now();
        if (dueInMs > 0) {
          clock.schedule(dueInMs, step);
          return;
        }
        deliver(ordered[next++]!.event);
      }
      resolve();
    };
    signal?.addEventListener("abort", () => resolve(), { once: true });
    step();
  });
}

/** Parses a playback speed: `10x`, `10`, `0.5x`. Returns undefined when it is not a positive number. */
export function parseSpeed(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?|\.\d+)x?$/.exec(text.trim());
  const speed = match === null ? Number.NaN : Number(match[1]);
  return Number.isFinite(speed) && speed > 0 ? speed : undefined;
}
