/**
 * How an OCC client reaches the row: through virtual-time messages in the simulator, through
 * HTTP in the real client. Callbacks rather than promises, so that a virtual clock's
 * discrete-event loop can drive them without a microtask queue.
 */
export interface OccTransport {
  /** Reads the row's version; `undefined` when the read failed (refused connection, 5xx). */
  read(done: (version: number | undefined) => void): void;
  /** Writes against `version`: written, refused as stale (412), or failed otherwise. */
  write(version: number, done: (outcome: OccWriteOutcome) => void): void;
}

export type OccWriteOutcome = "written" | "conflict" | "error";
