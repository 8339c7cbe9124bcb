import { constant } from "./policies/constant.ts";
import { decorrelatedJitter } from "./policies/decorrelated-jitter.ts";
import type { PolicyDefinition } from "./policies/definition.ts";
import type { ExactWaits } from "./policies/exact-waits.ts";
import { equalJitter } from "./policies/equal-jitter.ts";
import { exponential } from "./policies/exponential.ts";
import { fullJitter } from "./policies/full-jitter.ts";
import { google } from "./policies/google.ts";
import { grpc } from "./policies/grpc.ts";
import { reference } from "./policies/reference.ts";
import { table } from "./policies/table.ts";

/**
 * Every backoff policy kind, one definition each (src/backoff/policies/), in the order help
 * and POLICY_KINDS list them. A new kind: its file, its test, its line here; to publish it or make
 * it a -strategy, the steps of docs/design.md's "Adding a kind".
 */
export const POLICY_DEFINITIONS = [
  constant,
  exponential,
  reference,
  table,
  google,
  fullJitter,
  equalJitter,
  decorrelatedJitter,
  grpc,
] as const;

export type BackoffPolicy = (typeof POLICY_DEFINITIONS)[number]["defaults"];

export type PolicyKind = BackoffPolicy["kind"];

/** The policy type for a kind, e.g. `PolicyOf<"grpc">` is `GrpcPolicy`. */
export type PolicyOf<K extends PolicyKind> = Extract<BackoffPolicy, { readonly kind: K }>;

const BY_KIND: ReadonlyMap<string, PolicyDefinition<BackoffPolicy>> = new Map(
  POLICY_DEFINITIONS.map((definition) => [definition.defaults.kind, definition as PolicyDefinition<BackoffPolicy>]),
);

/** A kind's definition by its name: one the type, or a parser, has already checked. */
export function policyDefinition<K extends PolicyKind>(kind: K): PolicyDefinition<PolicyOf<K>> {
  return BY_KIND.get(kind)! as PolicyDefinition<PolicyOf<K>>;
}

/** The definition of a kind that may be anything (a policy from JavaScript or JSON); undefined for no known kind. */
export function knownPolicyDefinition(kind: unknown): PolicyDefinition<BackoffPolicy> | undefined {
  return typeof kind === "string" ? BY_KIND.get(kind) : undefined;
}

/** A policy's waits in a form other systems' settings speak (its definition's exactWaits); undefined where they are in none. */
export function exactWaitsOf(policy: BackoffPolicy): ExactWaits | undefined {
  // A policy of no known kind (from JavaScript or JSON) has none, as a kind that gives none.
  return knownPolicyDefinition(policy.kind)?.exactWaits?.(policy);
}
