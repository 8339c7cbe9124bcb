import type { Clock, Timer } from "./clock.ts";
import { EventHeap } from "./event-heap.ts";

interface ManualTimer extends Timer {
  readonly sequence: number;
  callback: (() => void) | undefined;
}

/**
 * A Clock whose time moves only when told to. Tests advance it step by step; the
 * simulator runs it as a discrete-event loop (`runUntil`), jumping from event to event.
 * Timers due at the same instant fire in the order they were scheduled.
 */
export class ManualClock implements Clock {
  private currentMs: number;
  private sequence = 0;
  private readonly heap = new EventHeap<ManualTimer>();
  /** Events fired so far; the simulator reports it as its measure of work. */
  firedCount = 0;

  constructor(startMs = 0) {
    this.currentMs = startMs;
  }

  now(): number {
    return this.currentMs;
  }

  schedule(delayMs: number, callback: () => void): Timer {
    const safeDelay = delayMs > 0 ? delayMs : 0; // also maps NaN to 0
    const timer: ManualTimer = {
      dueAt: this.currentMs + safeDelay,
      sequence: this.sequence++,
      callback,
    };
    if (timer.dueAt !== Infinity) this.heap.push(timer);
    return timer;
  }

  cancel(timer: Timer): void {
    (timer as ManualTimer).callback = undefined;
  }

  /** Time of the next live timer, or undefined when none is pending. */
  nextDueAt(): number | undefined {
    this.dropCancelled();
    return this.heap.peek()?.dueAt;
  }

  /** Fires every timer due at or before `targetMs` in order, then sets the time to it. */
  runUntil(targetMs: number): void {
    for (;;) {
      this.dropCancelled();
      const next = this.heap.peek();
      if (next === undefined || next.dueAt > targetMs) break;
      this.heap.pop();
      const callback = next.callback;
      next.callback = undefined;
      if (next.dueAt > this.currentMs) this.currentMs = next.dueAt;
      this.firedCount++;
      callback?.();
    }
    if (targetMs > this.currentMs) this.currentMs = targetMs;
  }

  advanceBy(ms: number): void {
    this.runUntil(this.currentMs + ms);
  }

  /** Runs events until none is left or `limitMs` is reached; returns the final time. */
  runAll(limitMs = Number.MAX_VALUE): number {
    for (;;) {
      const next = this.nextDueAt();
      if (next === undefined || next > limitMs) return this.currentMs;
      this.runUntil(next);
    }
  }

  private dropCancelled(): void {
    while (this.heap.size > 0 && this.heap.peek()!.callback === undefined) this.heap.pop();
  }
}
