import { percentile } from "../../model/percentile.ts";
import { type Exchange, type Fate, FATES } from "../../runtime/one-request.ts";
import type { OverloadRecord } from "./phase.ts";

/** The fates that turn excess work away rather than hold it: a limit of the service's. */
const TURNED_AWAY: ReadonlySet<Fate> = new Set(["shed", "connect-timeout", "refused", "reset"]);

export interface OverloadSummary {
  readonly requests: number;
  readonly durationMs: number;
  readonly counts: Readonly<Record<Fate, number>>;
  /** p50 of the served requests' latency, ms; NaN when none was served. */
  readonly servedP50Ms: number;
  /**
   * The most requests the service held at once, as the probe saw them: connected and not yet
   * answered, nor given up by the probe. The excess it turned away (shed, dropped, refused, reset)
   * is not counted.
   */
  readonly heldAtMost: number;
  /**
   * What it held when it began to turn work away: the median, over the first EXCESS_SAMPLE requests
   * turned away, of the requests held (connected, unanswered, and not turned away themselves) at
   * each one's send; undefined when none was. Less than heldAtMost where a full accept queue let handshakes complete whose final ACK it
   * then dropped: the probe counts those as connected, the service never held them.
   */
  readonly heldAtExcess: number | undefined;
  /** The fate of most of the excess turned away; undefined when none was. */
  readonly excess: Fate | undefined;
  /** The most a send came after its instant in the schedule, ms: the probe's own delay. */
  readonly maxLagMs: number;
}

export function summarizeOverload(record: OverloadRecord): OverloadSummary {
  const counts = Object.fromEntries(FATES.map((fate) => [fate, 0])) as Record<Fate, number>;
  for (const exchange of record.exchanges) counts[exchange.fate]++;
  const served = record.exchanges
    .filter((exchange) => exchange.fate === "served")
    .map((exchange) => exchange.endedAt - exchange.sentAt)
    .sort((a, b) => a - b);
  const turnedAway = [...TURNED_AWAY].filter((fate) => counts[fate] > 0).sort((a, b) => counts[b] - counts[a]);
  return {
    requests: record.exchanges.length,
    durationMs: record.lastSentAt - record.startedAt,
    counts,
    servedP50Ms: percentile(served, 0.5) ?? NaN,
    heldAtMost: mostAtOnce(record.exchanges.filter((exchange) => !TURNED_AWAY.has(exchange.fate))),
    heldAtExcess: heldAtExcess(record.exchanges),
    excess: turnedAway[0],
    maxLagMs: record.maxLagMs,
  };
}

/** The most intervals [connectedAt, endedAt) that overlap at one instant. */
export function mostAtOnce(exchanges: readonly Exchange[]): number {
  const edges: [number, number][] = [];
  for (const exchange of exchanges) {
    if (exchange.connectedAt === undefined) continue;
    edges.push([exchange.connectedAt, 1], [exchange.endedAt, -1]);
  }
  // An end at the same instant as a start comes first: the two never overlapped.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (open += step));
  return most;
}

/** The first requests turned away whose send instants sample what the service held then. */
const EXCESS_SAMPLE = 9;

function heldAtExcess(exchanges: readonly Exchange[]): number | undefined {
  const firstTurnedAway = exchanges
    .filter((exchange) => TURNED_AWAY.has(exchange.fate))
    .sort((a, b) => a.sentAt - b.sentAt)
    .slice(0, EXCESS_SAMPLE);
  if (firstTurnedAway.length === 0) return undefined;
  // Held as heldAtMost counts them: the excess turned away, answered or not yet, is not.
  const held = exchanges.filter((exchange) => exchange.connectedAt !== undefined && !TURNED_AWAY.has(exchange.fate));
  const heldAt = (at: number) => held.filter((exchange) => exchange.connectedAt! <= at && exchange.endedAt > at).length;
  const counts = firstTurnedAway.map((exchange) => heldAt(exchange.sentAt)).sort((a, b) => a - b);
  return counts[Math.floor(counts.length / 2)];
}
