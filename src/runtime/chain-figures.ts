import { jsonLines } from "../contracts/json-line.ts";
import { parseClientLine } from "../contracts/client-line.ts";
import { parseServerLine, type ServerLine } from "../contracts/server-line.ts";
import { firstCollapsed, tierFigures, type TierSample } from "../model/tiers/tier-figures.ts";
import type { TierRecord } from "./experiment.ts";
import { type Fault, faultsOfTier } from "../model/faults/fault-schedule.ts";
import { firstCollapsedText } from "../report/tier-table.ts";
import type { ChainFigures, ChainUsers, TierSeries } from "../model/tiers/chain-figures.ts";

export type { ChainFigures, ChainUsers, TierSeries };

/*
 * A real chain's figures per tier (docs/tiers.md), from what its programs printed: the same
 * pure figures as the simulator's (src/model/tiers/tier-figures.ts). A tier's arrivals are
 * counted at its door, as the simulator counts them: the attempts its caller sent (the users'
 * attempts for the edge, the tier above's upstream attempts below it), refused connections of a
 * crashed tier included; its goodput is the OK answers its caller got.
 */

/** A cumulative count over time: [ms from the users' start, total so far]. */
type Cumulative = readonly (readonly [number, number])[];

const CLIENT_OUTPUT = "the client's stdout";

/**
 * The figures of every tier: `clientLines` the users' JSON lines, `tiers` each tier's (the edge
 * first), `runStartMs` when the users started (ms from `startEpochMs`); the fault times
 * (`normalUntilMs`, `troubleUntilMs`) and `policyAmplification` are from the users' start too.
 */
export function chainFigures(input: {
  readonly startEpochMs: number;
  readonly runStartMs: number;
  readonly clientLines: readonly string[];
  /** The JSON lines of each spike's extra client (a spike fault is the users' load): their attempts reach the edge too. */
  readonly spikeClientLines?: readonly (readonly string[])[];
  readonly tiers: readonly TierRecord[];
  readonly policyAmplification: readonly number[];
  readonly normalUntilMs: number;
  readonly troubleUntilMs: number;
  /** The schedule, times from the users' start: a tier's own faults say why it collapsed. */
  readonly faults: readonly Fault[];
}): ChainFigures {
  const originMs = input.startEpochMs + input.runStartMs;
  const windows = clientWindows(input.clientLines, CLIENT_OUTPUT);
  const spikes = (input.spikeClientLines ?? []).map((lines, index) => clientWindows(lines, `spike client ${index + 1}'s stdout`));
  // The users' count so far at each of their windows' ends, the spike clients' added (read there), as the simulator counts them.
  const running = (count: (window: ClientWindow) => number): Cumulative => {
    let total = 0;
    const spikeSeries = spikes.map((spike) => cumulativeOf(spike, originMs, count));
    return windows.map((window) => {
      const endMs = window.epochMs - originMs;
      total += count(window);
      return [endMs, spikeSeries.reduce((sum, series) => sum + valueAt(series, endMs), total)] as const;
    });
  };
  const userRequests = running((window) => window.attempts - window.retries);
  const usersEndMs = judgedEndMs(windows, originMs);
  const windowMs = Math.max(0, ...windows.map((window) => window.windowMs));
  const users: ChainUsers = {
    requests: last(userRequests),
    ok: last(running((window) => window.ok)),
    gaveUp: last(running((window) => window.gaveUp)),
    attempts: last(running((window) => window.attempts)),
  };
  // What arrived at tier i and what its callers got back: the users' for the edge, the upstream counters of tier i − 1 below it.
  const doors = input.tiers.map((_tier, index) => {
    if (index === 0) return { arrivals: running((window) => window.attempts), ok: running((window) => window.ok) };
    const caller = serverLines(input.tiers[index - 1]!);
    return {
      arrivals: acrossIncarnations(caller, originMs, (line) => line.upstream?.attempts ?? 0),
      ok: acrossIncarnations(caller, originMs, (line) => line.upstream?.attemptsOk ?? 0),
    };
  });
  const tiers = input.tiers.map((tier, index) => {
    const door = doors[index]!;
    const samples: TierSample[] = door.arrivals.map(([endMs, arrivals], sample) => ({
      endMs,
      arrivals,
      okAnswers: door.ok[sample]![1],
      userRequests: valueAt(userRequests, endMs),
    }));
    const workForNobody = last(acrossIncarnations(serverLines(tier), originMs, (line) => line.abandoned));
    return tierFigures(
      {
        name: tier.name,
        samples: samples.filter((sample) => sample.endMs > 0),
        workForNobody,
        policyAmplification: input.policyAmplification[index]!,
      },
      users.requests,
      input.normalUntilMs,
      input.troubleUntilMs,
      usersEndMs,
    );
  });
  const series = doors.map((door, index) => ({
    name: input.tiers[index]!.name,
    points: door.arrivals.flatMap(([endMs, arrivals], sample) => {
      const [previousMs, previous] = sample === 0 ? [0, 0] : door.arrivals[sample - 1]!;
      return endMs > previousMs && endMs > 0
        ? [{ atS: (endMs + input.runStartMs) / 1000, arrivalsPerSec: ((arrivals - previous) * 1000) / (endMs - previousMs) }]
        : [];
    }),
  }));
  const first = firstCollapsed(tiers, windowMs);
  const faultsOf = (name: string) => faultsOfTier(input.faults, name, name === input.tiers[0]?.name);
  return { users, tiers, firstCollapsed: first?.name ?? null, firstCollapsedText: firstCollapsedText(first, faultsOf), series };
}

type ClientWindow = Extract<ReturnType<typeof parseClientLine>, { kind: "window" }>;

function clientWindows(lines: readonly string[], file: string): ClientWindow[] {
  return jsonLines(lines).flatMap(({ text, line }) => {
    const parsed = parseClientLine(text, { file, line });
    return parsed.kind === "window" ? [parsed] : [];
  });
}

/**
 * The users' last whole window ends the judged run (the short one after the run's end, printed as
 * the client stopped, counts but is not judged); their window is the one a tier's collapse is placed within.
 */
function judgedEndMs(windows: readonly ClientWindow[], originMs: number): number {
  const last = windows.filter((window) => window.partial !== true).at(-1) ?? windows.at(-1);
  return last === undefined ? Infinity : last.epochMs - originMs;
}

/** A client's count as a cumulative series from the start of its first window (0 there), in ms from `originMs`. */
function cumulativeOf(windows: readonly ClientWindow[], originMs: number, count: (window: ClientWindow) => number): Cumulative {
  if (windows.length === 0) return [];
  let total = 0;
  const first = windows[0]!;
  return [
    [first.epochMs - first.windowMs - originMs, 0] as const,
    ...windows.map((window) => [window.epochMs - originMs, (total += count(window))] as const),
  ];
}

function serverLines(tier: TierRecord): ServerLine[][] {
  const file = `the ${tier.name} server's stdout`;
  return tier.incarnationLines.map((lines) => jsonLines(lines).map(({ text, line }) => parseServerLine(text, { file, line })));
}

/**
 * A server's counter as one total over its incarnations: a crash starts its counts again
 * from zero, so each incarnation's totals are added to what the ones before it ended with.
 */
function acrossIncarnations(incarnations: readonly ServerLine[][], originMs: number, count: (line: ServerLine) => number): Cumulative {
  let before = 0;
  return incarnations.flatMap((lines) => {
    const points = lines.map((line) => [line.epochMs - originMs, before + count(line)] as const);
    before = points.at(-1)?.[1] ?? before;
    return points;
  });
}

const last = (series: Cumulative) => series.at(-1)?.[1] ?? 0;

/** A cumulative count at `atMs`, straight between the points around it (the programs print at their own instants); 0 for none. */
function valueAt(series: Cumulative, atMs: number): number {
  if (series.length === 0) return 0;
  const after = series.findIndex(([ms]) => ms >= atMs);
  if (after === -1) return last(series);
  const [afterMs, afterValue] = series[after]!;
  const [beforeMs, beforeValue] = after === 0 ? [0, 0] : series[after - 1]!;
  return afterMs === beforeMs ? afterValue : beforeValue + ((afterValue - beforeValue) * (atMs - beforeMs)) / (afterMs - beforeMs);
}
