import { CallbackTimer, type Clock, type Timer, type TimerOwner, timerOwner, type WarmableOwner, warmOwner } from "./clock.ts";
import { EventQueue } from "./event-queue.ts";

/*
 * A timer owner's clockSlot says where its pending arming is:
 * - DISARMED: none;
 * - a number >= 0: in the queue, with that sequence number. Cancelling or re-arming
 *   leaves the entry there; an entry whose sequence number is not its owner's is stale
 *   and skipped when it comes up, so neither needs a search;
 * - a number <= LANE_SLOT_BASE: in a lane, at a slot encoded by `laneSlot`. Cancelling
 *   marks that slot dead, so a lane skips dead entries without reading their owners:
 *   most client deadlines are cancelled, and reading a million users' objects again when
 *   their deadlines come up would cost a cache miss each.
 */
const DISARMED = -1;
const LANE_SLOT_BASE = -2;
/** Lanes beyond this many are not made (their delays use the queue): lane numbers fit in the slot code. */
const MAX_LANES = 8;
/** Live entries a lane reads ahead of its front at once (warmAhead), among at most so many entries. */
const LANE_WARM_AHEAD = 32;
const LANE_SCAN_AHEAD = 256;

/** The clockSlot of an arming at `index` of lane `lane` (a small integer, as V8 stores best). */
function laneSlot(lane: number, index: number): number {
  return LANE_SLOT_BASE - (index * MAX_LANES + lane);
}

/**
 * Timers of one fixed delay: armed in time order, so a FIFO keeps them sorted. A ring
 * buffer, keys in typed arrays as in the queue.
 */
class FifoLane {
  readonly delayMs: number;
  private readonly number: number;
  private dueAts = new Float64Array(1024);
  private sequences = new Float64Array(1024);
  private owners: (TimerOwner | undefined)[] = new Array<TimerOwner | undefined>(1024).fill(undefined);
  /** 1 for an entry still armed, 0 once cancelled or replaced. */
  private live = new Uint8Array(1024);
  /** Index of the front entry; capacity is a power of two, so indices wrap with a mask. */
  private head = 0;
  size = 0;
  /** Entries to leave the front before warmAhead reads the next batch; `warmth` keeps what it read. */
  private leftBeforeWarming = 0;
  private warmth = 0;

  constructor(delayMs: number, number: number) {
    this.delayMs = delayMs;
    this.number = number;
  }

  /** Adds an entry at the back; true when it is also the front (the lane was empty). */
  push(dueAt: number, sequence: number, owner: TimerOwner): boolean {
    if (this.size === this.dueAts.length) this.grow();
    const index = (this.head + this.size) & (this.dueAts.length - 1);
    this.dueAts[index] = dueAt;
    this.sequences[index] = sequence;
    this.owners[index] = owner;
    this.live[index] = 1;
    this.size++;
    owner.clockSlot = laneSlot(this.number, index);
    return this.size === 1;
  }

  /** Marks the entry at `index` dead (its owner was cancelled or re-armed); true when it was the front. */
  kill(index: number): boolean {
    this.live[index] = 0;
    return index === this.head;
  }

  /** Drops dead entries from the front. */
  dropStale(): void {
    while (this.size > 0 && this.live[this.head] === 0) this.shift();
  }

  frontDueAt(): number {
    return this.dueAts[this.head]!;
  }

  frontSequence(): number {
    return this.sequences[this.head]!;
  }

  frontOwner(): TimerOwner {
    return this.owners[this.head]!;
  }

  shift(): void {
    this.owners[this.head] = undefined;
    this.live[this.head] = 0;
    this.head = (this.head + 1) & (this.dueAts.length - 1);
    this.size--;
  }

  /** Takes the front entry, which fires; every LANE_WARM_AHEAD firings, first reads it and the next ones ahead. */
  shiftFiring(): void {
    if (--this.leftBeforeWarming <= 0) this.warmAhead();
    this.shift();
  }

  /**
   * Reads the owners of the next live entries, and the rows they keep apart (warmOwner), a
   * batch at a time: independent loads, which the processor fetches from memory in parallel,
   * rather than one cache miss per firing (a lane's owners are a million simulated users'
   * deadlines, which fire when a server stops answering). The queue does the same a bucket
   * ahead. Most entries of a client's deadline lane are cancelled ones: the scan skips them,
   * within a bound, and the next batch comes after as many firings as this one read.
   */
  private warmAhead(): void {
    const mask = this.dueAts.length - 1;
    const end = this.size < LANE_SCAN_AHEAD ? this.size : LANE_SCAN_AHEAD;
    let liveRead = 0;
    let seen = 0;
    for (let offset = 0; offset < end && liveRead < LANE_WARM_AHEAD; offset++) {
      const index = (this.head + offset) & mask;
      if (this.live[index] === 0) continue;
      liveRead++;
      seen += warmOwner(this.owners[index] as WarmableOwner | undefined);
    }
    this.warmth += seen;
    this.leftBeforeWarming = liveRead > 0 ? liveRead : 1;
  }

  /**
   * Makes room when the ring is full: drops the dead entries, and doubles the ring only if
   * at least half of it is live. Dead entries otherwise stay until their time comes, and
   * most deadlines are cancelled: a million clients failing fast would leave tens of
   * millions behind. Live entries move, so their owners learn their new slots.
   */
  private grow(): void {
    const capacity = this.dueAts.length;
    let liveCount = 0;
    for (let offset = 0; offset < this.size; offset++) liveCount += this.live[(this.head + offset) & (capacity - 1)]!;
    const newCapacity = liveCount * 2 > capacity ? capacity * 2 : capacity;
    const dueAts = new Float64Array(newCapacity);
    const sequences = new Float64Array(newCapacity);
    const owners = new Array<TimerOwner | undefined>(newCapacity).fill(undefined);
    const live = new Uint8Array(newCapacity);
    let to = 0;
    for (let offset = 0; offset < this.size; offset++) {
      const from = (this.head + offset) & (capacity - 1);
      if (this.live[from] !== 1) continue;
      dueAts[to] = this.dueAts[from]!;
      sequences[to] = this.sequences[from]!;
      owners[to] = this.owners[from];
      live[to] = 1;
      this.owners[from]!.clockSlot = laneSlot(this.number, to);
      to++;
    }
    this.dueAts = dueAts;
    this.sequences = sequences;
    this.owners = owners;
    this.live = live;
    this.head = 0;
    this.size = to;
  }
}

/** Where the earliest live timer is: a lane's index, or one of these. */
const IN_QUEUE = -1;
const NOWHERE = -2;

/**
 * A Clock whose time moves only when told to. Tests advance it step by step; the
 * simulator runs it as a discrete-event loop (`runUntil`), jumping from event to event.
 * Timers due at the same instant fire in the order they were scheduled (or armed).
 *
 * Delays listed in `fifoDelaysMs` (the client timeout, which every attempt arms, and a
 * fixed retry wait) go to a FIFO lane instead of the queue, as Node keeps one list per
 * timer duration: the cheapest structure for the most frequent timers of a large
 * simulation.
 */
export class ManualClock implements Clock {
  /** Timers fire at their due time exactly: runUntil sets the time to it before firing. */
  readonly punctual = true;
  private currentMs: number;
  private sequence = 0;
  private readonly queue: EventQueue<TimerOwner>;
  private readonly lanes: FifoLane[] = [];
  /**
   * The earliest live lane entry (lane number, or NOWHERE), kept between events: a lane's
   * front changes only when an empty lane gets an entry, when its front fires, or when
   * its front is cancelled, so most events need not look at the lanes at all.
   */
  private laneNext = NOWHERE;
  private laneNextDueAt = 0;
  private laneNextSequence = 0;
  private laneNextStale = false;
  /** Events fired so far; the simulator reports it as its measure of work. */
  firedCount = 0;
  private halted = false;

  constructor(startMs = 0, fifoDelaysMs: readonly number[] = []) {
    this.currentMs = startMs;
    this.queue = new EventQueue(startMs);
    for (const delay of fifoDelaysMs) {
      if (this.lanes.length < MAX_LANES && !this.lanes.some((lane) => lane.delayMs === delay)) {
        this.lanes.push(new FifoLane(delay, this.lanes.length));
      }
    }
  }

  now(): number {
    return this.currentMs;
  }

  schedule(delayMs: number, callback: () => void): Timer {
    const timer = new CallbackTimer(callback);
    this.arm(timer, delayMs);
    return timer.asTimer();
  }

  arm(owner: TimerOwner, delayMs: number): void {
    this.cancel(owner);
    const safeDelay = delayMs > 0 ? delayMs : 0; // also maps NaN to 0
    const dueAt = this.currentMs + safeDelay;
    const sequence = this.sequence++;
    owner.clockSlot = sequence;
    if (dueAt === Infinity) return;
    const lanes = this.lanes;
    for (let index = 0; index < lanes.length; index++) {
      const lane = lanes[index]!;
      if (lane.delayMs === safeDelay) {
        if (lane.push(dueAt, sequence, owner)) this.laneNextStale = true;
        return;
      }
    }
    this.queue.push(dueAt, sequence, owner);
  }

  cancel(timer: Timer | TimerOwner): void {
    const owner = timerOwner(timer);
    const slot = owner.clockSlot as number;
    if (slot <= LANE_SLOT_BASE) {
      const code = LANE_SLOT_BASE - slot;
      if (this.lanes[code % MAX_LANES]!.kill(Math.floor(code / MAX_LANES))) this.laneNextStale = true;
    }
    owner.clockSlot = DISARMED;
  }

  /** Time of the next live timer, or undefined when none is pending. */
  nextDueAt(): number | undefined {
    const source = this.findNext();
    if (source === NOWHERE) return undefined;
    return source === IN_QUEUE ? this.queue.topDueAt() : this.lanes[source]!.frontDueAt();
  }

  /**
   * Ends the simulation where it is: `runUntil` returns after the event that calls this,
   * and the time stays there. For good: no timer fires after it.
   */
  halt(): void {
    this.halted = true;
  }

  get isHalted(): boolean {
    return this.halted;
  }

  /** Fires every timer due at or before `targetMs` in order, then sets the time to it (unless halted). */
  runUntil(targetMs: number): void {
    const queue = this.queue;
    const lanes = this.lanes;
    for (;;) {
      if (this.halted) return;
      const source = this.findNext();
      if (source === NOWHERE) break;
      let owner: TimerOwner;
      let dueAt: number;
      if (source === IN_QUEUE) {
        dueAt = queue.topDueAt();
        if (dueAt > targetMs) break;
        owner = queue.topItem()!;
        queue.pop();
      } else {
        const lane = lanes[source]!;
        dueAt = lane.frontDueAt();
        if (dueAt > targetMs) break;
        owner = lane.frontOwner();
        lane.shiftFiring();
        this.laneNextStale = true;
      }
      // Disarmed before it runs, which may arm it again.
      owner.clockSlot = DISARMED;
      if (dueAt > this.currentMs) this.currentMs = dueAt;
      this.firedCount++;
      owner.onTimer();
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
      if (this.halted || next === undefined || next > limitMs) return this.currentMs;
      this.runUntil(next);
    }
  }

  /**
   * Drops stale entries from the top of the queue, and says where the earliest live timer
   * is (by time, then by sequence number).
   */
  private findNext(): number {
    const queue = this.queue;
    const live = queue.readyLive();
    if (this.laneNextStale) this.findLaneNext();
    const lane = this.laneNext;
    if (!live) return lane;
    if (lane === NOWHERE) return IN_QUEUE;
    const dueAt = queue.topDueAt();
    if (this.laneNextDueAt < dueAt || (this.laneNextDueAt === dueAt && this.laneNextSequence < queue.topSequence())) return lane;
    return IN_QUEUE;
  }

  /** Drops dead entries from the front of every lane and finds the earliest live one. */
  private findLaneNext(): void {
    this.laneNextStale = false;
    this.laneNext = NOWHERE;
    const lanes = this.lanes;
    for (let index = 0; index < lanes.length; index++) {
      const lane = lanes[index]!;
      lane.dropStale();
      if (lane.size === 0) continue;
      const dueAt = lane.frontDueAt();
      const sequence = lane.frontSequence();
      if (this.laneNext === NOWHERE || dueAt < this.laneNextDueAt || (dueAt === this.laneNextDueAt && sequence < this.laneNextSequence)) {
        this.laneNext = index;
        this.laneNextDueAt = dueAt;
        this.laneNextSequence = sequence;
      }
    }
  }
}
