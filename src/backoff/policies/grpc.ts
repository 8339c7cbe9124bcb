import { AT_LEAST_ONE, checkNumber, checkOrdered, FRACTION, NON_NEGATIVE } from "../validate.ts";
import { definePolicy, filledPolicy, type FactoryOptions } from "./definition.ts";
import { cappedGrowth } from "./growth.ts";
import { cappedExpression, waitShape } from "./wait-shape.ts";
import { growingWaits } from "./exact-waits.ts";

/**
 * gRPC connection backoff (grpc/grpc doc/connection-backoff.md; grpc-go internal/backoff):
 * `b = min(initialMs * multiplier^(n-1), maxMs)`, `wait = b * (1 + uniform(-jitter, jitter))`.
 * The C-core document leaves the first wait unjittered; grpc-go jitters every wait, as here.
 */
export interface GrpcPolicy {
  readonly kind: "grpc";
  /** Ms. Default 1000. */
  readonly initialMs: number;
  /** Growth per failure, >= 1. Default 1.6. */
  readonly multiplier: number;
  /** Ms. Default 120000 (2 min). */
  readonly maxMs: number;
  /** Relative spread, in [0, 1]. Default 0.2. */
  readonly jitter: number;
}

const DEFAULTS: GrpcPolicy = Object.freeze({
  kind: "grpc",
  initialMs: 1000,
  multiplier: 1.6,
  maxMs: 120_000,
  jitter: 0.2,
});

function check(policy: GrpcPolicy): void {
  checkNumber("initialMs", policy.initialMs, NON_NEGATIVE);
  checkNumber("maxMs", policy.maxMs, NON_NEGATIVE);
  checkOrdered("initialMs", policy.initialMs, "maxMs", policy.maxMs);
  checkNumber("multiplier", policy.multiplier, AT_LEAST_ONE);
  checkNumber("jitter", policy.jitter, FRACTION);
}

export function grpcPolicy(options: FactoryOptions<GrpcPolicy> = {}): GrpcPolicy {
  return filledPolicy(DEFAULTS, options, check);
}

export const grpc = definePolicy<GrpcPolicy>({
  defaults: DEFAULTS,
  create: grpcPolicy,
  libraryName: "grpcPolicy",
  check,
  delay: (policy, attempt, _previousDelayMs, random) => {
    const base = cappedGrowth(policy.initialMs, policy.multiplier, attempt - 1, policy.maxMs);
    return base * (1 + policy.jitter * (2 * random.uniform() - 1));
  },
  exactWaits: (policy) => growingWaits(policy.initialMs, policy.multiplier, policy.maxMs, policy.jitter),
  firstWaitFollowsThinkTime: false,
  waitShape: (policy) => ({
    ...waitShape(policy.initialMs, policy.multiplier, policy.maxMs, "spread", policy.initialMs),
    spread: policy.jitter,
  }),
  waitExpression: (policy, attempt) =>
    `${cappedExpression(`${policy.initialMs} * ${policy.multiplier} ** (${attempt} - 1)`, policy.maxMs)} * (1 + ${policy.jitter} * (2 * Math.random() - 1))`,
  drawsNormal: false,
});
