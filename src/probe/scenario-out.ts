import { stringify } from "yaml";
import { formatDuration } from "../cli/duration.ts";
import type { ServerModelSpec } from "../model/servers/models.ts";
import { modelSettings } from "./model-settings.ts";
import type { OverloadScenario } from "./overload/settings.ts";
import type { ProbeLoad } from "../options/probe.ts";

export interface ProbedSystem {
  /** What was measured, as the file names it: the URL probed, or the load tests fitted (-from). */
  readonly probed: string;
  /** The URL probed (credentials hidden); undefined for load tests read from files. */
  readonly url?: string | undefined;
  readonly date: Date;
  readonly spec: ServerModelSpec;
  /** One line on the fit, for the description. */
  readonly summary: string;
  readonly errorRate: number;
  readonly timeoutMs: number;
  readonly load: ProbeLoad;
  /** What the overload phase measured; undefined with -no-overload or -from. */
  readonly overload?: OverloadScenario | undefined;
}

/**
 * The scenario file (docs: the scenario format) of a probed service: its fitted model's flags,
 * its everyday error rate, and the user's timeout and load, in the `system` section that
 * ./sim, the demo and choose read.
 */
export function scenarioYaml(probed: ProbedSystem): string {
  const load =
    probed.load.arrivals === "open"
      ? { arrivals: "open", rate: probed.load.rate }
      : { clients: probed.load.clients, lambda: probed.load.lambda };
  const day = probed.date.toISOString().slice(0, 10);
  const document = {
    scenario: 1,
    name: `probe of ${probed.probed}`,
    description: [
      `Measured by thundering-herd probe on ${day}: ${probed.summary}`,
      ...(probed.overload?.notModelled ?? []).map(sentence),
    ].join(". "),
    source: {
      title: `thundering-herd probe of ${probed.probed}, ${probed.date.toISOString()}`,
      ...(probed.url === undefined ? {} : { url: probed.url }),
    },
    ...(probed.overload === undefined ? {} : { measured: probed.overload.measured }),
    system: {
      ...modelSettings(probed.spec),
      ...probed.overload?.settings,
      "error-rate": Number(probed.errorRate.toPrecision(3)),
      timeout: formatDuration(probed.timeoutMs),
      ...load,
    },
  };
  return stringify(document, { lineWidth: 0 });
}

/** A clause as a sentence of its own: its first letter capital. */
const sentence = (clause: string) => clause.charAt(0).toUpperCase() + clause.slice(1);
