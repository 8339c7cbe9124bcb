import { formatDuration } from "../cli/duration.ts";
import type { ServerModelSpec } from "../model/servers/models.ts";

/** A duration rounded to three significant digits, as a flag takes it (20.3ms, 1.25s). */
export function roundedDuration(ms: number): string {
  return formatDuration(Number(ms.toPrecision(3)));
}

/**
 * A fitted model as the flags of ./server and ./sim say it, in flag order: what a scenario
 * file's `system` section holds and what -validate starts ./server with.
 */
export function modelSettings(spec: ServerModelSpec): Record<string, string | number> {
  switch (spec.kind) {
    case "queue": {
      const { threads, serviceTimeMs, serviceDist, serviceSigma } = spec.pool;
      return {
        model: "queue",
        threads,
        "service-time": roundedDuration(serviceTimeMs),
        "service-dist": serviceDist,
        ...(serviceDist === "lognormal" ? { "service-sigma": serviceSigma } : {}),
      };
    }
    case "linear":
      return { model: "linear", baseDelay: roundedDuration(spec.latency.baseDelayMs), slope: roundedDuration(spec.latency.slopeMs) };
    case "exponential": {
      const { limit, factor, exponentDivisor, baseDelayMs } = spec.latency;
      return {
        model: "exponential",
        limit,
        factor: Number(factor.toPrecision(4)),
        k: exponentDivisor,
        baseDelay: roundedDuration(baseDelayMs),
      };
    }
  }
}

/** The same as command-line arguments: `-model queue -threads 4 …`. */
export function modelArgs(spec: ServerModelSpec): string[] {
  return Object.entries(modelSettings(spec)).flatMap(([name, value]) => [`-${name}`, String(value)]);
}
