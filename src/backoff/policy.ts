import { FieldRangeError, describe } from "./validate.ts";
import type { FactoryOptions } from "./policies/definition.ts";
import { type BackoffPolicy, knownPolicyDefinition, POLICY_DEFINITIONS, type PolicyKind, type PolicyOf } from "./policies.ts";

/*
 * Backoff policies as read-only data: a `kind` and its parameters, all times in
 * milliseconds. A policy holds no state, so one object can serve any number of clients;
 * `nextDelay` (delay.ts) turns it into waits. Each kind is one definition
 * (src/backoff/policies/<kind>.ts: its type, defaults, factory, validation and waits), listed
 * in policies.ts; this file is their public face. Each factory fills its defaults, validates
 * once and returns a frozen policy.
 */

export type { BackoffPolicy, PolicyKind, PolicyOf } from "./policies.ts";
export type { ConstantPolicy } from "./policies/constant.ts";
export type { DecorrelatedJitterPolicy } from "./policies/decorrelated-jitter.ts";
export type { EqualJitterPolicy } from "./policies/equal-jitter.ts";
export type { ExponentialPolicy } from "./policies/exponential.ts";
export type { FullJitterPolicy } from "./policies/full-jitter.ts";
export type { GooglePolicy } from "./policies/google.ts";
export type { GrpcPolicy } from "./policies/grpc.ts";
export type { ReferencePolicy } from "./policies/reference.ts";
export type { TablePolicy } from "./policies/table.ts";
export { constantPolicy } from "./policies/constant.ts";
export { decorrelatedJitterPolicy } from "./policies/decorrelated-jitter.ts";
export { equalJitterPolicy } from "./policies/equal-jitter.ts";
export { exponentialPolicy } from "./policies/exponential.ts";
export { fullJitterPolicy } from "./policies/full-jitter.ts";
export { googlePolicy } from "./policies/google.ts";
export { grpcPolicy } from "./policies/grpc.ts";
export { referencePolicy } from "./policies/reference.ts";
export { tablePolicy } from "./policies/table.ts";
export { ARTICLE_FACTOR } from "./policies/growth.ts";

/** Factory options: every parameter optional; `undefined` means "use the default". */
export type PolicyOptions<P extends BackoffPolicy> = FactoryOptions<P>;

/** Every policy with its default parameters, as each kind's definition holds them. */
export const POLICY_DEFAULTS: { readonly [K in PolicyKind]: PolicyOf<K> } = Object.freeze(
  Object.fromEntries(POLICY_DEFINITIONS.map((definition) => [definition.defaults.kind, definition.defaults])) as {
    [K in PolicyKind]: PolicyOf<K>;
  },
);

/** All kinds, in a stable order (for flag parsing and help text). */
export const POLICY_KINDS: readonly PolicyKind[] = Object.freeze(Object.keys(POLICY_DEFAULTS) as PolicyKind[]);

export function isPolicyKind(value: string): value is PolicyKind {
  return Object.hasOwn(POLICY_DEFAULTS, value);
}

/**
 * Throws a RangeError naming the first bad field of `policy`; returns the policy unchanged.
 * The factories call it; call it yourself for policies written as literals or parsed from
 * configuration.
 */
export function validatePolicy<P extends BackoffPolicy>(policy: P): P {
  // `policy` is typed, but it may come from JavaScript or JSON: check the kind too.
  const kind: unknown = (policy as { kind: unknown }).kind;
  const definition = knownPolicyDefinition(kind);
  if (definition === undefined) throw new FieldRangeError("kind", "must be a known policy kind", describe(kind));
  definition.check(policy);
  return policy;
}
