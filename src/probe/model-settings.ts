import { formatDuration } from "../cli/duration.ts";
import type { ServerModelSpec } from "../model/servers/models.ts";

/**
 * A fitted model (rounded: fit-models.ts) as the flags of ./server and ./sim say it, in flag order: what a scenario
 * file's `system` section holds and what -validate starts ./server with.
 */
export function modelSettings(spec: ServerModelSpec): Record<string, string | number> {
  switch (spec.kind) {
    case "queue": {
      const { threads, serviceTimeMs, serviceDist, serviceSigma } = spec.pool;
      return {
        model: "queue",
        threads,
        "service-time": formatDuration(serviceTimeMs),
        "service-dist": serviceDist,
        ...(serviceDist === "lognormal" ? { "service-sigma": serviceSigma } : {}),
      };
    }
    case "linear":
      return { model: "linear", baseDelay: formatDuration(spec.latency.baseDelayMs), slope: formatDuration(spec.latency.slopeMs) };
    case "exponential": {
      const { limit, factor, exponentDivisor, baseDelayMs } = spec.latency;
      return {
        model: "exponential",
        limit,
        factor,
        k: exponentDivisor,
        baseDelay: formatDuration(baseDelayMs),
      };
    }
  }
}

/** The same as command-line arguments: `-model queue -threads 4 …`. */
export function modelArgs(spec: ServerModelSpec): string[] {
  return Object.entries(modelSettings(spec)).flatMap(([name, value]) => [`-${name}`, String(value)]);
}
