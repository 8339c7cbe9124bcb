import type { StepMeasure } from "../fit/step-measure.ts";

/**
 * A load test a user already ran, read from the file its tool wrote (probe -from): the steps it
 * measured, as the probe's own closed-loop steps are, and what the file does not say, each with
 * what the fit assumes instead. One format per file of this folder, listed in formats.ts.
 */
export interface LoadTestReading {
  readonly steps: readonly StepMeasure[];
  /**
   * Where the concurrency is the tool's own count rather than Little's law's, what it counts: users
   * that never pause (a closed loop's connections), or users who may pause (a sheet's column).
   * formats.ts holds either to Little's law (littleChecked).
   */
  readonly users?: "never pause" | "may pause";
  /** One line per thing the file lacks, with the assumption made: printed before the fit. */
  readonly assumed: readonly string[];
}

export interface LoadTestFormat {
  /** As the probe names it, with the tool's option that writes it: `autocannon --json`. */
  readonly name: string;
  /** Whether the text is this format's (read cheaply: a first look, not a validation). */
  readonly recognizes: (text: string) => boolean;
  /** The steps; a LoadTestFileError naming the field for a file that is this format but broken. */
  readonly read: (text: string) => LoadTestReading;
}

/** A file that cannot be read as a load test: the message is the one line the probe prints. */
export class LoadTestFileError extends Error {
  override readonly name = "LoadTestFileError";
}

/** A percentile the file does not give: the step shows none, and the fit does not read it. */
export const NOT_GIVEN = Number.NaN;

/**
 * Requests in the service on average, by Little's law: throughput × mean latency. What an
 * open-loop run (a fixed rate) or users who think between requests hold in the service, which is
 * what the fit's concurrency means; for a closed loop without think time it is the connections.
 */
export function concurrencyByLittle(throughputPerSec: number, meanLatencyMs: number): number {
  return Number(((throughputPerSec * meanLatencyMs) / 1000).toPrecision(3));
}

/** How far throughput × mean latency may be from a run's users before one of the two is not what it says (formats.ts, littleChecked). */
export const LITTLE_TOLERANCE = 0.25;

export const LITTLE_ASSUMED =
  "concurrency: requests in the service on average, throughput × mean latency (Little's law), as the tool's users may think or its rate be fixed";

/** The line for the percentiles a file's runs lack (NOT_GIVEN in any of them), with `hint` on how to have them; none when none. */
export function lackedPercentiles(steps: readonly StepMeasure[], hint = ""): string[] {
  const names = (["p50", "p90", "p99"] as const).filter((name) => steps.some((step) => Number.isNaN(step[`${name}Ms`])));
  if (names.length === 0) return [];
  const spread = names.includes("p50") || names.includes("p90") ? "; the fit takes the service times as constant (no spread to read)" : "";
  return [`${names.join(", ")}: not in the file, shown as n/a${spread}${hint}`];
}

/** A number the file must hold at `path`, or a LoadTestFileError naming it. */
export function requiredNumber(value: unknown, path: string, format: string): number {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  throw new LoadTestFileError(`${format}: ${path} is ${JSON.stringify(value) ?? "missing"}, not a number of 0 or more`);
}

/** A JSON object, or undefined for text that is not one (so that another format may be tried). */
export function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A field of a JSON object, or undefined. */
export function field(value: unknown, ...path: string[]): unknown {
  let at = value;
  for (const key of path) at = at !== null && typeof at === "object" ? (at as Record<string, unknown>)[key] : undefined;
  return at;
}
