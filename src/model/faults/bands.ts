import type { Phases } from "../timeline.ts";
import { faultLabel } from "./fault-schedule.ts";

/** A time band of trouble, as charts shade it: from, to (ms from the run's start) and its name. */
export interface TroubleBand {
  readonly fromMs: number;
  readonly toMs: number;
  readonly label: string;
}

/** The bands to shade: one per fault, named by kind (capacity ×0.5); the one stop of a run without a schedule as "outage". */
export function troubleBands(phases: Phases): TroubleBand[] {
  const faults = phases.faults ?? [];
  if (faults.length === 0) return [{ fromMs: phases.stopAtMs, toMs: phases.resumeAtMs, label: "outage" }];
  return faults.map((fault) => ({ fromMs: fault.atMs, toMs: fault.atMs + fault.durationMs, label: faultLabel(fault) }));
}

/** The bands as one line of text: "outage 15.0–35.0 s", "capacity ×0.25 15.0–45.0 s, spike ×2 60.0–65.0 s". */
export function bandsText(bands: readonly TroubleBand[]): string {
  const s = (ms: number) => (ms / 1000).toFixed(1);
  return bands.map((band) => `${band.label} ${s(band.fromMs)}–${s(band.toMs)} s`).join(", ");
}
