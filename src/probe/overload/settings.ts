import { formatDuration } from "../../cli/duration.ts";
import type { ServerModelSpec } from "../../model/servers/models.ts";
import type { MeasuredPastSaturation } from "../../scenario-file/format.ts";
import type { OverloadFindings } from "./overload.ts";
import { WORK_FOR_NOBODY_SHARE } from "./work-for-nobody.ts";

/** What the overload phase adds to a probed scenario: the server's flags it measured, the record, and what the model cannot say. */
export interface OverloadScenario {
  readonly settings: Readonly<Record<string, string | number | boolean>>;
  readonly measured: MeasuredPastSaturation;
  /** Each a sentence on a behaviour measured that the scenario's flags carry only approximately. */
  readonly notModelled: readonly string[];
}

/**
 * The server flags that say what the service did past saturation, for the fitted model:
 * - excess turned away once it held N: the queue model's -queue-limit (N − threads waiting), the
 *   other models' -max-concurrency N; with 503/429, answered at once (-shed-with 503); with connect
 *   timeouts, dropped unanswered (-shed-with drop), and for the queue model its listen backlog
 *   -backlog N − threads too: a server whose queue is its accept queue holds no more while stopped;
 *   refused or reset connections fail at once, as a 503 does, and are said to be modelled so;
 * - the work of clients that left dropped, not served: -cancel-on-disconnect.
 */
export function overloadScenario(findings: OverloadFindings, spec: ServerModelSpec, date: Date): OverloadScenario {
  const { summary, abandoned } = findings;
  const settings: Record<string, string | number | boolean> = {};
  const notModelled: string[] = [];
  const held = summary.heldAtExcess;
  if (summary.excess !== undefined && held !== undefined) {
    const waiting = "pool" in spec ? Math.max(1, held - spec.pool.threads) : undefined;
    if (waiting === undefined) settings["max-concurrency"] = Math.max(1, held);
    else settings["queue-limit"] = waiting;
    if (summary.excess === "connect-timeout") {
      settings["shed-with"] = "drop";
      if (waiting !== undefined) settings.backlog = waiting;
    } else if (summary.excess !== "shed") {
      notModelled.push(`past ${held} requests held, it ${EXCESS_WORDS[summary.excess]}, modelled as a 503: both fail at once`);
    }
  }
  const share = abandoned?.servedShare;
  if (share !== undefined && share < WORK_FOR_NOBODY_SHARE) settings["cancel-on-disconnect"] = true;
  return { settings, measured: measuredRecord(findings, date), notModelled };
}

const EXCESS_WORDS: Readonly<Record<string, string>> = {
  refused: "refused the excess connections",
  reset: "reset the excess connections",
};

function measuredRecord(findings: OverloadFindings, date: Date): MeasuredPastSaturation {
  const { summary, recovery, abandoned } = findings;
  const { counts } = summary;
  return {
    date: date.toISOString(),
    capacity: round(findings.capacityPerSec),
    "baseline-p50": formatDuration(Number(findings.baseline.p50Ms.toFixed(1))),
    "overload-rate": round(findings.ratePerSec),
    "overload-requests": summary.requests,
    served: counts.served,
    shed: counts.shed,
    errors: counts.error,
    "held-past-timeout": counts.timeout,
    "connect-timeout": counts["connect-timeout"],
    refused: counts.refused,
    reset: counts.reset,
    "probe-limit": counts["probe-limit"],
    "held-at-most": summary.heldAtMost,
    ...(summary.heldAtExcess === undefined ? {} : { "held-at-excess": summary.heldAtExcess }),
    recovery: recovery.backAfterMs === undefined ? "none" : formatDuration(Math.round(recovery.backAfterMs)),
    ...(abandoned?.servedShare === undefined ? {} : { "work-for-nobody": Number(abandoned.servedShare.toFixed(2)) }),
  };
}

const round = (value: number) => Number(value.toFixed(1));

/** What the scenario file carries of the overload phase, as the probe prints it. */
export function overloadScenarioLines(scenario: OverloadScenario): string[] {
  const settings = Object.entries(scenario.settings).map(([name, value]) => `${name}: ${value}`);
  return [
    `past saturation in the scenario: ${settings.length === 0 ? "nothing beyond the fitted model" : settings.join(", ")}`,
    ...scenario.notModelled.map((sentence) => `past saturation, approximated: ${sentence}`),
  ];
}
