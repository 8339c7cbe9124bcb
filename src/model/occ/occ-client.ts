import { nextDelay } from "../../backoff/delay.ts";
import type { BackoffPolicy } from "../../backoff/policy.ts";
import type { Random } from "../../backoff/random.ts";
import type { Clock } from "../../clock/clock.ts";
import type { OccTransport, OccWriteOutcome } from "./occ-transport.ts";

/** What one client did until its write landed (or its policy gave up). */
export interface OccClientTally {
  readonly reads: number;
  readonly writes: number;
  readonly conflicts: number;
  /** Reads or writes that failed for another reason than a conflict (real client only). */
  readonly errors: number;
  /** When its write landed, or it gave up: the clock's time; undefined while it is still trying. */
  readonly doneAtMs: number | undefined;
  readonly succeeded: boolean;
}

/**
 * A client that updates the row exactly once: read the version, write against it, and on a
 * conflict back off and start over from the read, as the blog's OccClient does. The n-th
 * wait is the policy's for n consecutive conflicts (the blog's attempt counter, which starts
 * at 1 on the first conflict). A failed read or write backs off the same way.
 */
export class OccClient {
  private readonly transport: OccTransport;
  private readonly policy: BackoffPolicy;
  private readonly random: Random;
  private readonly clock: Clock;
  private readonly onDone: (tally: OccClientTally) => void;
  private reads = 0;
  private writes = 0;
  private conflicts = 0;
  private errors = 0;
  private failures = 0;
  private previousWaitMs: number | undefined = undefined;
  private doneAtMs: number | undefined = undefined;
  private succeeded = false;

  constructor(transport: OccTransport, policy: BackoffPolicy, random: Random, clock: Clock, onDone: (tally: OccClientTally) => void) {
    this.transport = transport;
    this.policy = policy;
    this.random = random;
    this.clock = clock;
    this.onDone = onDone;
  }

  start(): void {
    this.read();
  }

  private read(): void {
    this.reads++;
    this.transport.read((version) => {
      if (version === undefined) {
        this.errors++;
        this.backOff();
        return;
      }
      this.writes++;
      this.transport.write(version, (outcome) => this.afterWrite(outcome));
    });
  }

  private afterWrite(outcome: OccWriteOutcome): void {
    if (outcome === "written") {
      this.finish(true);
      return;
    }
    if (outcome === "conflict") this.conflicts++;
    else this.errors++;
    this.backOff();
  }

  private backOff(): void {
    this.failures++;
    const waitMs = nextDelay(this.policy, this.failures, this.previousWaitMs, this.random);
    if (waitMs === undefined) {
      this.finish(false);
      return;
    }
    this.previousWaitMs = waitMs;
    this.clock.schedule(waitMs, () => this.read());
  }

  /** Its counts so far: a client still trying when the run is cut short counts too. */
  get tally(): OccClientTally {
    const { reads, writes, conflicts, errors, doneAtMs, succeeded } = this;
    return { reads, writes, conflicts, errors, doneAtMs, succeeded };
  }

  private finish(succeeded: boolean): void {
    this.doneAtMs = this.clock.now();
    this.succeeded = succeeded;
    this.onDone(this.tally);
  }
}
