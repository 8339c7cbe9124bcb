import type { Random } from "../../backoff/random.ts";
import type { Clock } from "../../clock/clock.ts";
import { drawNetworkDelay, type NetworkDelay } from "./network-delay.ts";
import type { OccTransport, OccWriteOutcome } from "./occ-transport.ts";
import type { VersionedRow } from "./versioned-row.ts";

/**
 * Messages to the row and back in virtual time: the request travels one network delay, the
 * row answers at once (the blog's server has no service time), and the answer travels
 * another. A write is judged when it arrives, so the "contention window" is exactly the
 * time between a client's read reaching the row and its write reaching the row.
 */
export class SimulatedTransport implements OccTransport {
  private readonly row: VersionedRow;
  private readonly clock: Clock;
  private readonly network: NetworkDelay;
  private readonly random: Random;

  constructor(row: VersionedRow, clock: Clock, network: NetworkDelay, random: Random) {
    this.row = row;
    this.clock = clock;
    this.network = network;
    this.random = random;
  }

  read(done: (version: number | undefined) => void): void {
    this.clock.schedule(this.delay(), () => {
      const version = this.row.read();
      this.clock.schedule(this.delay(), () => done(version));
    });
  }

  write(version: number, done: (outcome: OccWriteOutcome) => void): void {
    this.clock.schedule(this.delay(), () => {
      const outcome: OccWriteOutcome = this.row.write(version) ? "written" : "conflict";
      this.clock.schedule(this.delay(), () => done(outcome));
    });
  }

  private delay(): number {
    return drawNetworkDelay(this.network, this.random);
  }
}
