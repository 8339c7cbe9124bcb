import { describe, expect, it } from "vitest";
import {
  adaptiveThrottleConfig,
  awsRetryQuota,
  constantPolicy,
  consecutiveBreaker,
  envoyRetryBudget,
  retryBudget,
  YANDEX_RETRY_BREAKER,
  yandexRetryBudget,
} from "../../../src/backoff/index.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import type { Timer } from "../../../src/clock/clock.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { ADMITTED, ClientInstances, type FleetConfig, NO_FLEET_PROTECTION, REJECTED } from "../../../src/model/client-instances.ts";
import { Herd, type Transport } from "../../../src/model/herd.ts";
import type { AttemptResult } from "../../../src/model/outcome.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";
import { retryConfig } from "../../helpers/retry-config.ts";

const REFUSED: AttemptResult = { outcome: "error", errorKind: "refused" };

/** A server that refuses every attempt after `latencyMs`, or never answers (undefined). */
function failingTransport(clock: ManualClock, latencyMs: number | undefined) {
  let sent = 0;
  const transport: Transport<Timer | undefined> = {
    send(sink) {
      sent++;
      return latencyMs === undefined ? undefined : clock.schedule(latencyMs, () => sink.done(REFUSED));
    },
    abort(timer) {
      if (timer !== undefined) clock.cancel(timer);
    },
  };
  return { transport, sent: () => sent };
}

/** A herd of users who start at once (think time ~1 ms) and retry every `retryMs`, against a failing server. */
function runHerd(
  fleet: Partial<FleetConfig>,
  options: { users: number; untilMs: number; latencyMs?: number | undefined; retryMs?: number },
) {
  const clock = new ManualClock();
  const server = failingTransport(clock, "latencyMs" in options ? options.latencyMs : 5);
  const stats = new WindowStats(0);
  const retry = retryConfig({
    backoff: constantPolicy({ delayMs: options.retryMs ?? 10 }),
    thinkTimeMeanMs: 1,
    fleet: { ...NO_FLEET_PROTECTION, ...fleet },
  });
  const herd = new Herd(clock, seededRandom(1), server.transport, stats, { users: options.users, timeoutMs: 100, retry });
  herd.start();
  clock.runUntil(options.untilMs);
  const counts = stats.totals(clock.now()).counts;
  herd.stop();
  return { counts, sent: server.sent() };
}

describe("client instances: where the protections keep their state", () => {
  it("gRPC budget: with one instance, the failures of some users use up the retries of all", () => {
    // 10 tokens, no successes: each instance allows exactly 4 retries (tokens 9, 8, 7, 6 > 5), ever.
    const grpc = { kind: "grpc", budget: retryBudget() } as const;
    const perUser = runHerd({ budget: grpc }, { users: 10, untilMs: 10_000 });
    const shared = runHerd({ budget: grpc, instances: 1 }, { users: 10, untilMs: 10_000 });
    const pairs = runHerd({ budget: grpc, instances: 5 }, { users: 10, untilMs: 10_000 });
    expect([perUser.counts.retries, pairs.counts.retries, shared.counts.retries]).toEqual([40, 20, 4]);
    // Once a budget is empty every failure is given up; the users go on sending new requests.
    expect(shared.counts.gaveUp).toBe(shared.counts.errors - 4);
  });

  it("gRPC budget: one user's failures drain a shared budget and refuse another user's retry", () => {
    const instances = new ClientInstances(
      { ...NO_FLEET_PROTECTION, instances: 1, budget: { kind: "grpc", budget: retryBudget({ maxTokens: 4 }) } },
      2,
    );
    const separate = new ClientInstances({ ...NO_FLEET_PROTECTION, budget: { kind: "grpc", budget: retryBudget({ maxTokens: 4 }) } }, 2);
    for (const herd of [instances, separate]) {
      herd.attemptEnded(0, "error", 0);
      herd.attemptEnded(0, "error", 0); // user 0: two failures, 2 tokens left where shared
      herd.attemptEnded(1, "error", 0);
    }
    expect(instances.allowRetry(1, "error", 0)).toBe(false); // 1 token: not > 2
    expect(separate.allowRetry(1, "error", 0)).toBe(true); // user 1's own: 3 tokens
  });

  it("AWS quota: 500 tokens at 5 a retry give 100 retries per instance, shared or not", () => {
    const aws = { kind: "aws", budget: awsRetryQuota() } as const;
    expect(runHerd({ budget: aws, instances: 1 }, { users: 3, untilMs: 20_000 }).counts.retries).toBe(100);
    expect(runHerd({ budget: aws }, { users: 3, untilMs: 20_000 }).counts.retries).toBe(300);
  });

  it("Envoy budget: a shared instance lets 5 of 30 timed-out requests retry (20 % of 25 and more in progress)", () => {
    // The server never answers: the 30 first attempts time out at ~100 ms, and each retry
    // holds its place through a 1 s wait. With one instance the k-th timeout finds 29 - k
    // attempts still in progress: max(3, floor(0.2 x (29 - k))) is 5 down to k = 4, then less.
    const envoy = { kind: "envoy", budget: envoyRetryBudget() } as const;
    const shared = runHerd({ budget: envoy, instances: 1 }, { users: 30, untilMs: 150, latencyMs: undefined, retryMs: 1_000 });
    expect(shared.counts.timedout).toBe(30);
    expect(shared.counts.gaveUp).toBe(25);
    const perUser = runHerd({ budget: envoy }, { users: 30, untilMs: 150, latencyMs: undefined, retryMs: 1_000 });
    expect(perUser.counts.timedout).toBe(30);
    expect(perUser.counts.gaveUp).toBe(0); // alone, a user always has min_retry_concurrency 3
  });

  it("breaker: a shared one opens for everyone after 5 failures; locally rejected attempts never reach the server", () => {
    const breaker = consecutiveBreaker({ failureThreshold: 5, breakMs: 1_000 });
    const shared = runHerd({ breaker, instances: 1 }, { users: 10, untilMs: 1_000, latencyMs: 20, retryMs: 50 });
    // The 10 first attempts were all sent before the 5th failure opened it; every retry since was refused.
    expect(shared.sent).toBe(10);
    expect(shared.counts.attempts).toBe(10);
    expect(shared.counts.rejected).toBeGreaterThan(100);
    expect(shared.counts.retries).toBe(0);
    const perUser = runHerd({ breaker }, { users: 10, untilMs: 1_000, latencyMs: 20, retryMs: 50 });
    expect(perUser.sent).toBe(50); // each user's own breaker opens after its own 5 failures
    expect(perUser.counts.rejected).toBeGreaterThan(0);
  });

  it("breaker: after the break one probe goes out; its failure reopens it", () => {
    const breaker = consecutiveBreaker({ failureThreshold: 5, breakMs: 1_000 });
    // Opened at ~20 ms: one probe at 1.02-1.07 s, failing 20 ms later; the next probe 1 s after that.
    expect(runHerd({ breaker, instances: 1 }, { users: 10, untilMs: 1_000, latencyMs: 20, retryMs: 50 }).sent).toBe(10);
    expect(runHerd({ breaker, instances: 1 }, { users: 10, untilMs: 2_000, latencyMs: 20, retryMs: 50 }).sent).toBe(11);
    expect(runHerd({ breaker, instances: 1 }, { users: 10, untilMs: 2_200, latencyMs: 20, retryMs: 50 }).sent).toBe(12);
  });

  it("SRE throttle: a shared one throttles sooner than one per user, and throttled attempts cost the server nothing", () => {
    const throttle = adaptiveThrottleConfig();
    const shared = runHerd({ throttle, instances: 1 }, { users: 20, untilMs: 5_000 });
    const perUser = runHerd({ throttle }, { users: 20, untilMs: 5_000 });
    for (const run of [shared, perUser]) {
      expect(run.sent).toBe(run.counts.attempts);
      expect(run.counts.throttled).toBeGreaterThan(0);
    }
    // With nothing accepted, p = n / (n + 1) after n requests: both end up refusing almost all.
    expect(shared.counts.throttled / (shared.counts.throttled + shared.counts.attempts)).toBeGreaterThan(0.95);
  });

  it("admits in order: the throttle counts the request, then the breaker decides", () => {
    const instances = new ClientInstances(
      { ...NO_FLEET_PROTECTION, instances: 1, throttle: adaptiveThrottleConfig(), breaker: consecutiveBreaker({ failureThreshold: 1 }) },
      1,
    );
    const random = seededRandom(3);
    expect(instances.admit(0, false, 0, random)).toBe(ADMITTED);
    instances.attemptEnded(0, "timedout", 10);
    expect(instances.admit(0, true, 20, random)).toBe(REJECTED); // p = 1/2 for the throttle; this draw passed it
  });

  it("Yandex budget: 30 retries from a full bucket, with one instance for all; a refused server earns nothing back", () => {
    const yandex = { kind: "yandex", budget: yandexRetryBudget() } as const;
    const run = runHerd({ budget: yandex, instances: 1 }, { users: 10, untilMs: 5_000 });
    expect(run.counts.retries).toBe(30);
  });

  it("Yandex budget: only a first try's success earns; a retry's success does not", () => {
    const instances = new ClientInstances({ ...NO_FLEET_PROTECTION, budget: { kind: "yandex", budget: yandexRetryBudget() } }, 1);
    const random = seededRandom(1);
    instances.admit(0, true, 0, random);
    expect(instances.allowRetry(0, "error", 0)).toBe(true);
    instances.attemptEnded(0, "ok", 1);
    expect(instances.budgetLevel(0, 1)).toBe(2900);
    instances.admit(0, false, 2, random);
    instances.attemptEnded(0, "ok", 3);
    expect(instances.budgetLevel(0, 3)).toBe(2910);
  });

  it("Yandex retry breaker: a failing server stops every retry, and first tries still go out", () => {
    const run = runHerd({ breaker: YANDEX_RETRY_BREAKER, instances: 1 }, { users: 10, untilMs: 2_000 });
    expect(run.sent).toBeGreaterThan(100);
    expect(run.counts.retries).toBe(0);
  });
});

describe("an aborted attempt that was the breaker's probe", () => {
  it("gives the probe back: the next attempt probes, where the breaker used to stay half-open and refuse every call", () => {
    const fleet = new ClientInstances(
      { ...NO_FLEET_PROTECTION, instances: 1, breaker: consecutiveBreaker({ failureThreshold: 1, breakMs: 100 }) },
      2,
    );
    const random = seededRandom(1);
    expect(fleet.admit(0, false, 0, random)).toBe(ADMITTED);
    fleet.attemptEnded(0, "error", 1);
    // The break is over: user 0's attempt is the probe; its caller aborts it (a middle tier's cancelled call).
    expect(fleet.admit(0, false, 200, random)).toBe(ADMITTED);
    expect(fleet.admit(1, false, 201, random)).toBe(REJECTED);
    fleet.attemptAborted(0, 202);
    expect(fleet.admit(1, false, 203, random)).toBe(ADMITTED);
    fleet.attemptEnded(1, "ok", 210);
    expect(fleet.admit(0, false, 211, random)).toBe(ADMITTED);
    expect(fleet.admit(1, false, 212, random)).toBe(ADMITTED);
  });
});
