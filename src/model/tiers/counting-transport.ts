import type { AttemptSink, Transport } from "../attempt.ts";
import type { AttemptResult } from "../outcome.ts";

/** What a tier's callers sent it and got back, counted at its door. */
export interface TierDoor {
  /** Attempts that arrived at the tier (sent by its callers, whatever became of them). */
  arrivals: number;
  /** OK answers that reached a caller still waiting: the tier's goodput. */
  okAnswers: number;
}

/** An attempt on its way through a counting door: the caller's sink, and what the inner transport returned. */
class CountedAttempt implements AttemptSink {
  inner: unknown = undefined;
  /** The deadline the attempt carries into the tier (DeadlineCarrier, src/model/upstream-calls.ts); undefined for none. */
  carriedDeadline: number | undefined = undefined;
  private readonly sink: AttemptSink;
  private readonly door: TierDoor;

  constructor(sink: AttemptSink, door: TierDoor) {
    this.sink = sink;
    this.door = door;
  }

  done(result: AttemptResult): void {
    if (result.outcome === "ok") this.door.okAnswers++;
    this.sink.done(result);
  }

  notSent(): void {
    this.door.arrivals--;
    this.sink.notSent();
  }
}

/**
 * A transport that counts, at a tier's door, the attempts its callers send it and the OK
 * answers they get: the figures of amplification and goodput per tier (docs/tiers.md),
 * whichever transport (a modelled network, HTTP) is inside. `deadlineOf` gives the deadline an
 * attempt carries into the tier (Infinity for none): the inner transport and the tier's calls read it.
 */
export function countingTransport(inner: Transport, door: TierDoor, deadlineOf?: (sink: AttemptSink) => number): Transport<CountedAttempt> {
  return {
    send(sink) {
      door.arrivals++;
      const attempt = new CountedAttempt(sink, door);
      const deadline = deadlineOf?.(sink) ?? Infinity;
      if (deadline < Infinity) attempt.carriedDeadline = deadline;
      attempt.inner = inner.send(attempt);
      return attempt;
    },
    abort(attempt) {
      inner.abort(attempt.inner);
    },
  };
}
