import { formatDuration } from "../../cli/duration.ts";
import type { ServerModelSpec } from "../../model/servers/models.ts";
import type { MeasuredPastSaturation } from "../../scenario-file/format.ts";
import type { OverloadFindings } from "./overload.ts";
import { WORK_FOR_NOBODY_SHARE } from "./work-for-nobody.ts";

/** What the overload phase adds to a probed scenario: the server's flags it measured, the record, and what the model cannot say. */
export interface OverloadScenario {
  readonly settings: Readonly<Record<string, string | number | boolean>>;
  readonly measured: MeasuredPastSaturation;
  /** Each a sentence on a behaviour measured that the scenario's flags do not carry. */
  readonly notModelled: readonly string[];
}

/**
 * The server flags that say what the service did past saturation, for the fitted model:
 * - excess shed with 503/429 once it held N: the queue model's -queue-limit (N − threads waiting),
 *   the other models' -max-concurrency N (each sheds with 503 at once);
 * - the work of clients that left dropped, not served: -cancel-on-disconnect.
 * Excess turned away otherwise (connect timeouts, refused or reset connections) is not a 503:
 * no flag says it yet, and the sentence says so.
 */
export function overloadScenario(findings: OverloadFindings, spec: ServerModelSpec, date: Date): OverloadScenario {
  const { summary, abandoned } = findings;
  const settings: Record<string, string | number | boolean> = {};
  const notModelled: string[] = [];
  if (summary.excess !== undefined && summary.heldAtExcess !== undefined) {
    if (summary.excess === "shed") {
      if ("pool" in spec) settings["queue-limit"] = Math.max(1, summary.heldAtExcess - spec.pool.threads);
      else settings["max-concurrency"] = Math.max(1, summary.heldAtExcess);
    } else {
      notModelled.push(
        `past ${summary.heldAtExcess} requests held, the service turned the excess away by ${EXCESS_WORDS[summary.excess]}, which no server flag models yet: the scenario's server holds it`,
      );
    }
  }
  const share = abandoned?.servedShare;
  if (share !== undefined && share < WORK_FOR_NOBODY_SHARE) settings["cancel-on-disconnect"] = true;
  return { settings, measured: measuredRecord(findings, date), notModelled };
}

const EXCESS_WORDS: Readonly<Record<string, string>> = {
  "connect-timeout": "connect timeouts (a full accept queue drops the SYN)",
  refused: "refusing connections",
  reset: "resetting connections",
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
    ...scenario.notModelled.map((sentence) => `past saturation, not in the scenario: ${sentence}`),
  ];
}
