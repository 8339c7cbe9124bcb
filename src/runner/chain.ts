import { seededRandom, streamRandom } from "../backoff/random.ts";
import type { Clock } from "../clock/clock.ts";
import { ManualClock } from "../clock/manual-clock.ts";
import type { AttemptSink, HerdObserver, Transport } from "../model/attempt.ts";
import { conditionsOf } from "../model/faults/conditions.ts";
import { faultKind, playedAs } from "../model/faults/kinds.ts";
import { createLoad } from "../model/load.ts";
import { createServerModel, MIDDLE_TIER_MODELS, middleTierOf } from "../model/servers/models.ts";
import type { ServerModel } from "../model/servers/server-model.ts";
import { countingTransport, type TierDoor } from "../model/tiers/counting-transport.ts";
import type { TierSample } from "../model/tiers/tier-figures.ts";
import { UpstreamCalls } from "../model/upstream-calls.ts";
import { type WindowReport, WindowStats } from "../model/window-stats.ts";
import { SimulatedNetwork } from "./network.ts";
import type { ChainConfig, ChainTierConfig, UpstreamPolicy } from "../config/chain-config.ts";
import { scheduleFaults, serverSeed, type SimulationHooks, spikeStarter } from "./simulate.ts";

/** One tier built on a clock. */
export interface BuiltTier {
  readonly config: ChainTierConfig;
  readonly model: ServerModel;
  readonly network: SimulatedNetwork;
  /** What its callers sent it and got back. */
  readonly door: TierDoor;
  /** Its way in: the network behind a counting door. */
  readonly transport: Transport;
}

/**
 * The tiers of a chain on one clock, built from the bottom up: each tier that calls another
 * is an UpstreamPool (src/model/servers/upstream-pool.ts) whose requests hold a thread while
 * their call, made by UpstreamCalls with the tier's own policy on the shared attempt
 * lifecycle, runs through the next tier's modelled network. `callerOf(i)` is who calls tier i
 * (the users for tier 0): its timeout and deadline reach the tier with each attempt.
 */
export function buildChain(clock: Clock, tiers: readonly ChainTierConfig[], seed: number, users: UpstreamPolicy): BuiltTier[] {
  const built: BuiltTier[] = [];
  let next: Transport | undefined;
  for (let index = tiers.length - 1; index >= 0; index--) {
    const tier = tiers[index]!;
    const caller = index === 0 ? users : tiers[index - 1]!.upstream!;
    const serviceRandom = streamRandom(serverSeed(seed), 1 + index);
    const errors = tier.errorRate > 0 || tier.faults.some((fault) => faultKind(fault.kind).injectsErrors);
    const errorInjection = errors ? { rate: tier.errorRate, random: streamRandom(serverSeed(seed), 1000 + index) } : undefined;
    let model: ServerModel;
    const modelOptions = {
      cancelOnDisconnect: tier.cancelOnDisconnect,
      maxConcurrency: tier.maxConcurrency,
      errorInjection,
      maxInService: tier.maxInService,
      serviceRandom,
    };
    if (tier.upstream === undefined) {
      model = createServerModel(tier.model, clock, modelOptions);
    } else {
      const middleTier = middleTierOf(tier.model);
      if (middleTier === undefined)
        throw new Error(`tier ${tier.name} calls another tier: it must be a ${MIDDLE_TIER_MODELS.join(" or ")} model`);
      const calls = new UpstreamCalls(clock, streamRandom(seed, 2000 + index), {
        timeoutMs: tier.upstream.timeoutMs,
        retry: tier.upstream.retry,
        targets: Array.from({ length: tier.fanout }, () => next!),
        maxCalls: middleTier.threads(tier.model),
        // The deadline the request brought (its door set it), carried down with each attempt.
        carriedDeadline: (context) => (context as { readonly carriedDeadline?: number }).carriedDeadline,
      });
      const pool = middleTier.create(tier.model, clock, modelOptions, calls);
      calls.reportTo(pool);
      model = pool;
    }
    // A deadline-aware tier acts on the deadline its door computed (its timeout Infinity: nothing of its own).
    const network = new SimulatedNetwork(model, clock, tier.backlog, {
      retryAfterMs: tier.retryAfterMs,
      dropShed: tier.dropShed,
      deadline: tier.deadlineAware ? { clock, timeoutMs: Infinity } : undefined,
    });
    const door: TierDoor = { arrivals: 0, okAnswers: 0 };
    // An attempt carries the earlier of the deadline its caller's request brought and, when the
    // caller propagates deadlines, its own (send time + the caller's timeout), as a real middle tier sends.
    const deadlineOf = (sink: AttemptSink) => {
      const carried = (sink as { readonly carriedDeadline?: number }).carriedDeadline ?? Infinity;
      const own = caller.propagateDeadline ? clock.now() + caller.timeoutMs : Infinity;
      return carried < own ? carried : own;
    };
    const transport = countingTransport(network.transport, door, deadlineOf);
    built.unshift({ config: tier, model, network, door, transport });
    next = transport;
  }
  return built;
}

/** What a simulated chain gives: the users' totals, and per tier its samples and totals. */
export interface ChainResult {
  readonly users: WindowReport;
  /** Requests the users made (first attempts). */
  readonly userRequests: number;
  readonly tiers: readonly {
    readonly name: string;
    readonly samples: readonly TierSample[];
    readonly workForNobody: number;
  }[];
  readonly events: number;
  readonly endMs: number;
}

/** Each tier's own faults on the clock: a pause stops its network, the others act on its model or its process. */
function scheduleTierFaults(clock: ManualClock, tiers: ReturnType<typeof buildChain>): void {
  for (const tier of tiers) {
    for (const stop of tier.config.faults.filter((fault) => playedAs(fault, "pause"))) {
      clock.schedule(stop.atMs, () => tier.network.stop());
      clock.schedule(stop.atMs + stop.durationMs, () => tier.network.resume());
    }
    scheduleFaults(tier.config.faults, {
      clock,
      setConditions: (active) => tier.model.setFaultConditions(conditionsOf(active)),
      crash: () => tier.network.crash(),
      restart: () => tier.network.restart(),
      spike: () => () => {},
    });
  }
}

/**
 * The chain on a virtual clock: the users call the edge, each tier the next; faults strike their
 * tiers. The hooks see the users' requests, as simulate's do (choose's success within the SLO).
 */
export function simulateChain(config: ChainConfig, hooks: SimulationHooks = {}): ChainResult {
  const clock = new ManualClock(0);
  const userPolicy = { timeoutMs: config.timeoutMs, propagateDeadline: config.propagateDeadline, retry: config.retry };
  const tiers = buildChain(clock, config.tiers, config.seed, userPolicy);
  const stats = new WindowStats(0);
  // The users' requests so far: their first attempts (a hedge or a retry is not a request).
  let userRequests = 0;
  const observer: HerdObserver = {
    attemptStarted: (isRetry, latenessMs) => {
      if (!isRetry) userRequests++;
      stats.attemptStarted(isRetry, latenessMs);
    },
    attemptNotSent: (isRetry) => {
      if (!isRetry) userRequests--;
      stats.attemptNotSent(isRetry);
    },
    attemptEnded: (result, latencyMs) => stats.attemptEnded(result, latencyMs),
    attemptRefused: (refusal) => stats.attemptRefused(refusal),
    gaveUp: () => stats.gaveUp(),
    // Only when asked for: a herd whose observer has requestEnded keeps each request's start.
    ...(hooks.onRequestEnded === undefined
      ? {}
      : {
          requestEnded: (ok: boolean, latencyMs: number, retried: boolean) => hooks.onRequestEnded!(ok, latencyMs, retried, clock.now()),
          requestStarted: () => hooks.onRequestStarted?.(clock.now()),
        }),
  };
  const loadOptions = { users: config.users, arrivals: config.arrivals, timeoutMs: config.timeoutMs, retry: config.retry };
  const load = createLoad(loadOptions, clock, seededRandom(config.seed), tiers[0]!.transport, observer);
  const samples: TierSample[][] = tiers.map(() => []);
  const sample = () =>
    tiers.forEach((tier, index) =>
      samples[index]!.push({ endMs: clock.now(), arrivals: tier.door.arrivals, okAnswers: tier.door.okAnswers, userRequests }),
    );
  // A window ending at instant T holds what happened before T: every sample is scheduled first, so it
  // is taken before anything else due at T. A fault that starts or ends at T (a stopped tier resumed
  // at T sends at once what it held) belongs to the window that starts at T, as in a real chain,
  // whose windows never end on a fault's instant; taken after it, such a burst was split between
  // two windows by the order of events alone (docs/tiers.md, "The real chain against the simulated one").
  for (let window = 1; window * config.intervalMs <= config.durationMs; window++) clock.schedule(window * config.intervalMs, sample);
  scheduleTierFaults(clock, tiers);
  scheduleFaults(config.spikes, {
    clock,
    setConditions: () => {},
    crash: () => {},
    restart: () => {},
    spike: spikeStarter(loadOptions, config.seed, clock, tiers[0]!.transport, observer),
  });
  load.start();
  clock.runUntil(config.durationMs);
  load.stop();
  const result: ChainResult = {
    users: stats.totals(clock.now()),
    userRequests,
    tiers: tiers.map((tier, index) => ({
      name: tier.config.name,
      samples: samples[index]!,
      workForNobody: tier.model.snapshot().abandoned,
    })),
    events: clock.firedCount,
    endMs: clock.now(),
  };
  for (const tier of tiers) tier.model.stop();
  return { ...result, userRequests };
}
