import { conditionsOf, type FaultConditions } from "./conditions.ts";
import { type Fault, factorProblem } from "./fault-schedule.ts";
import { CONTROLLED_KINDS, type ControlledKind, isControlledKind } from "./kinds.ts";

/**
 * The real server's fault control (./server -admin-listen, src/server/admin-server.ts): the faults a runner turns on and off while the
 * server runs, as the body of `PUT /faults`. The schedule's notation without times:
 * `capacity*0.5, slow*3, errors*0.2`; an empty body (or `none`) lifts them all. Only the
 * kinds that live inside the server are taken (the condition mechanism, ./kind.ts): the others
 * are signals, a restart or the clients' load.
 */
export { CONTROLLED_KINDS, type ControlledKind } from "./kinds.ts";

export interface ActiveFault {
  readonly kind: ControlledKind;
  readonly factor: number;
}

/** A body the control cannot read: the message is the one line of its 400 answer. */
export class FaultControlError extends Error {
  override readonly name = "FaultControlError";
}

/** A body longer than this is refused (413) before it is read: a list of three faults fits in far less. */
export const MAX_CONTROL_BODY_BYTES = 4096;

const ACTIVE_PATTERN = /^([a-z]+)\*(.+)$/;

/** Reads a `PUT /faults` body; the faults come back in the order given. */
export function parseFaultControl(body: string): ActiveFault[] {
  const trimmed = body.trim();
  if (trimmed === "" || trimmed === "none") return [];
  return trimmed.split(",").map((raw) => {
    const part = raw.replace(/\s+/g, "");
    const match = ACTIVE_PATTERN.exec(part);
    if (match === null)
      throw new FaultControlError(`"${part}" is not kind*factor, e.g. capacity*0.5 (or an empty body to lift every fault)`);
    const [, kindText, factorText] = match;
    if (!isControlledKind(kindText!)) {
      throw new FaultControlError(`"${part}": the control takes ${CONTROLLED_KINDS.join(", ")}, not ${kindText}`);
    }
    const kind = kindText;
    const factor = Number(factorText);
    const problem = factorProblem(kind, factorText!.trim() === "" ? Number.NaN : factor);
    if (problem !== undefined) throw new FaultControlError(`"${part}": ${problem}`);
    return { kind, factor };
  });
}

/** The faults as the control reads them: `capacity*0.5, slow*3`; `none` when there are none. */
export function formatActiveFaults(active: readonly ActiveFault[]): string {
  return active.length === 0 ? "none" : active.map(({ kind, factor }) => `${kind}*${factor}`).join(", ");
}

/** The conditions the server model works under with these faults on (overlapping ones combine as in the simulator). */
export function conditionsOfActive(active: readonly ActiveFault[]): FaultConditions {
  return conditionsOf(active.map((fault): Fault => ({ ...fault, atMs: 0, durationMs: Infinity })));
}

/** The kinds of a schedule the control handles, with their factors: what a runner sends while they are on. */
export function activeOf(faults: readonly Fault[]): ActiveFault[] {
  return faults.flatMap((fault) => (isControlledKind(fault.kind) ? [{ kind: fault.kind, factor: fault.factor }] : []));
}
