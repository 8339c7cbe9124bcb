import type { FlagSettings } from "../recommend/settings.ts";

/*
 * What `check CONFIG` asks of each configuration format it reads (one file per format in
 * src/check/formats/, listed in formats.ts). A format reads the user's file into our model's
 * flags, field by field, with the documentation each mapping rests on, and names every field it
 * does not model; and it writes a policy back into the user's own file, changing only what must
 * change, so that the smallest change that qualifies is shown as a diff of their file. check
 * reads what a format wrote again before it simulates it, so the policy ranked is the one the
 * changed file says, not the one asked for.
 */

/** The flags a format may set: the client's retry strategy and protections, and its per-try timeout. */
export const CHECK_FLAGS = [
  "strategy",
  "simple-backoff-delay",
  "min-delay",
  "max-delay",
  "backoff-factor",
  "jitter",
  "max-attempts",
  "timeout",
  "hedge-delay",
  "budget",
  "budget-tokens",
  "budget-ratio",
  "budget-percent",
  "budget-min-concurrency",
  "budget-ttl",
  "budget-min-per-sec",
  "budget-quota",
  "budget-retry-cost",
  "budget-timeout-cost",
  "breaker",
  "breaker-failures",
  "breaker-ratio",
  "breaker-min-throughput",
  "breaker-window",
  "breaker-break",
] as const;

export type CheckFlag = (typeof CHECK_FLAGS)[number];

/** One field of the user's file (or one default it relies on) and what it sets in our model. */
export interface FieldReading {
  /** Where it is, in the file's own words: `methodConfig[0].retryPolicy.maxAttempts`. */
  readonly field: string;
  /** As the file writes it (`"4"`, `"0.1s"`), or `default (25ms)` for a field absent whose documented default applies. */
  readonly value: string;
  /** What it sets, as our flags (`{ "max-attempts": "4" }`); empty when it sets nothing we model beyond what another field sets. */
  readonly settings: FlagSettings;
  /** The documentation that defines the field: a title and a URL. */
  readonly source: string;
  /** Where our model differs from what the field does: one sentence, with the difference. */
  readonly approximation?: string;
}

/** A field present in the file that our model does not simulate: named, never ignored silently. */
export interface UnmodeledField {
  readonly field: string;
  readonly value: string;
  /** Why it is not modelled, or what the simulator assumes instead (one sentence). */
  readonly why: string;
}

/** One retry policy of the file: a gRPC methodConfig, an Envoy route, a resilience4j instance, … */
export interface PolicyReading {
  /** How the file names it: `methodConfig[0] (helloworld.Greeter)`, `route "api" of virtual host "backend"`. */
  readonly name: string;
  /** Every flag the fields set, merged; our defaults for the rest. Always sets `strategy`. */
  readonly settings: FlagSettings;
  readonly fields: readonly FieldReading[];
  readonly unmodeled: readonly UnmodeledField[];
}

export interface ConfigReading {
  readonly policies: readonly PolicyReading[];
}

/** A policy written back into the user's file, or why the format cannot say it. */
export type Written =
  | { readonly kind: "written"; readonly text: string; readonly notes: readonly string[] }
  | { readonly kind: "inexpressible"; readonly why: string };

export interface ConfigFormat {
  /** Short, for -format: `grpc`, `envoy`, `istio`, `aws`, `resilience4j`, `polly`, `cockatiel`, `p-retry`. */
  readonly name: string;
  /** For people: `gRPC service config (JSON)`. */
  readonly title: string;
  /** The documentation the format is read by (title and URL), printed with -h. */
  readonly source: string;
  /** Whether the text is this format (the first format that recognizes a file reads it; -format overrides). */
  readonly recognizes: (text: string) => boolean;
  /** The file's policies; a ConfigFileError naming the field for a file of this format that is wrong. */
  readonly read: (text: string) => ConfigReading;
  /**
   * The user's text with policy `policyIndex` changed to mean `target` (flags absent from it keep
   * their defaults): only the fields that must change are touched, the rest of the text (comments,
   * order, other policies) stays as it was. Inexpressible when the format has no field for a flag
   * `target` sets to other than its default (Envoy has no consecutive breaker).
   */
  readonly write: (text: string, policyIndex: number, target: FlagSettings) => Written;
  /** The flags write can change, for the neighbours check tries around the user's policy. */
  readonly knobs: readonly CheckFlag[];
}

/** A file of a known format that is wrong: one line, exit 2. */
export class ConfigFileError extends Error {
  override name = "ConfigFileError";
}
