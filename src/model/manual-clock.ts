import type { Clock, Timer } from "./clock.ts";
import { EventHeap } from "./event-heap.ts";

interface ManualTimer extends Timer {
  readonly sequence: number;
  callback: (() => void) | undefined;
}

/** Timers of one fixed delay: scheduled in time order, so a FIFO keeps them sorted. */
interface FifoLane {
  items: ManualTimer[];
  head: number;
}

/** Compact a lane once this many fired slots have piled up at its front. */
const LANE_COMPACT_THRESHOLD = 4096;

/**
 * A Clock whose time moves only when told to. Tests advance it step by step; the
 * simulator runs it as a discrete-event loop (`runUntil`), jumping from event to event.
 * Timers due at the same instant fire in the order they were scheduled.
 *
 * Delays listed in `fifoDelaysMs` (the client timeout, which every attempt schedules) go
 * to a FIFO lane instead of the heap, as Node keeps one list per timer duration: O(1)
 * instead of O(log n) for the most frequent timer of a large simulation.
 */
export class ManualClock implements Clock {
  private currentMs: number;
  private sequence = 0;
  private readonly heap = new EventHeap<ManualTimer>();
  private readonly lanes = new Map<number, FifoLane>();
  /** Events fired so far; the simulator reports it as its measure of work. */
  firedCount = 0;

  constructor(startMs = 0, fifoDelaysMs: readonly number[] = []) {
    this.currentMs = startMs;
    for (const delay of fifoDelaysMs) this.lanes.set(delay, { items: [], head: 0 });
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
    if (timer.dueAt === Infinity) return timer;
    const lane = this.lanes.get(safeDelay);
    if (lane === undefined) this.heap.push(timer);
    else lane.items.push(timer);
    return timer;
  }

  cancel(timer: Timer): void {
    (timer as ManualTimer).callback = undefined;
  }

  /** Time of the next live timer, or undefined when none is pending. */
  nextDueAt(): number | undefined {
    return this.takeNext(false)?.dueAt;
  }

  /** Fires every timer due at or before `targetMs` in order, then sets the time to it. */
  runUntil(targetMs: number): void {
    for (;;) {
      const next = this.takeNext(false);
      if (next === undefined || next.dueAt > targetMs) break;
      this.takeNext(true);
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

  /** The earliest live timer of the heap and the lanes; with `remove`, also takes it out. */
  private takeNext(remove: boolean): ManualTimer | undefined {
    while (this.heap.size > 0 && this.heap.peek()!.callback === undefined) this.heap.pop();
    let best = this.heap.peek();
    let bestLane: FifoLane | undefined;
    for (const lane of this.lanes.values()) {
      while (lane.head < lane.items.length && lane.items[lane.head]!.callback === undefined) lane.head++;
      if (lane.head >= LANE_COMPACT_THRESHOLD && lane.head * 2 >= lane.items.length) {
        lane.items.splice(0, lane.head);
        lane.head = 0;
      }
      const candidate = lane.items[lane.head];
      if (candidate === undefined) continue;
      if (best === undefined || candidate.dueAt < best.dueAt || (candidate.dueAt === best.dueAt && candidate.sequence < best.sequence)) {
        best = candidate;
        bestLane = lane;
      }
    }
    if (remove && best !== undefined) {
      if (bestLane === undefined) this.heap.pop();
      else bestLane.head++;
    }
    return best;
  }
}
