import { createLoad, type LoadOptions } from "../model/load.ts";
import { OpenLoop, type OpenLoopTotals, openLoopTotals } from "../model/open-loop.ts";
import type { HerdObserver, Transport } from "../model/attempt.ts";
import type { Herd } from "../model/herd.ts";
import { ManualClock } from "../clock/manual-clock.ts";
import { policyDefinition } from "../backoff/policies.ts";
import { seededRandom, streamRandom } from "../backoff/random.ts";
import type { OutOfMemoryEvent, ServiceSnapshot } from "../model/service-queue.ts";
import { conditionsOf } from "../model/faults/conditions.ts";
import type { Fault } from "../model/faults/fault-schedule.ts";
import { faultKind } from "../model/faults/kinds.ts";
import { spikeSeed } from "../model/faults/spike-seed.ts";
import type { ServerModelFigures } from "../model/servers/figures.ts";
import type { ServerModel } from "../model/servers/server-model.ts";
import { createServerModel, modelFigures } from "../model/servers/models.ts";
import { perSecond, type WindowReport, WindowStats } from "../model/window-stats.ts";
import type { ClientWindow, ServerSample } from "../model/timeline.ts";
import { SimulatedNetwork } from "./network.ts";
import { NO_PROTECTION, type ProtectionConfig, type SimulationConfig } from "../config/simulation-config.ts";

export type SimulationEvent =
  | { readonly kind: "server"; readonly atMs: number; readonly snapshot: ServiceSnapshot }
  | {
      readonly kind: "client";
      readonly atMs: number;
      readonly report: WindowReport;
      readonly inFlight: number;
      /** With open-loop arrivals: requests alive and arrivals dropped so far. */
      readonly openLoop?: OpenLoopTotals | undefined;
    };

export interface SimulationResult {
  readonly server: ServerSample[];
  readonly client: ClientWindow[];
  readonly totals: WindowReport;
  /** Timer events the virtual clock fired: the simulator's measure of work. */
  readonly events: number;
  readonly droppedConnections: number;
  /** The server's totals at the end. */
  readonly serverTotals: ServiceSnapshot;
  /** With open-loop arrivals: requests alive at the end and arrivals dropped. */
  readonly openLoop?: OpenLoopTotals | undefined;
  /** When the server ran out of memory: a real one dies there, so the run ended there. */
  readonly outOfMemory: OutOfMemoryEvent | undefined;
  /** Where the run ended: the configured duration, or the moment the server ran out of memory. */
  readonly endMs: number;
  /** Requests in service at the end that were only counted, never stored: none could complete within the run. */
  readonly countedRequests: number;
  /** The most requests in service the simulator stored one by one at any one time. */
  readonly mostStoredRequests: number;
  /** The run ended early at SimulationHooks.haltOnceDown: the server stays above its line to the end. */
  readonly haltedDown: boolean;
}

/**
 * The capacity and tipping point of the run's server model, for its clients' timeout; its
 * `overloadAbove` is the line the verdict judges the server against.
 */
export function figuresOf(config: SimulationConfig): ServerModelFigures {
  return modelFigures(config.model ?? { kind: "exponential", latency: config.latency }, config.timeoutMs, config.maxConcurrency);
}

/** What a run does at each fault's start and end, for scheduleFaults: one action per mechanism (src/model/faults/kind.ts). */
export interface FaultActions {
  readonly clock: ManualClock;
  /** The faults on now that change the server's conditions. */
  readonly setConditions: (active: readonly Fault[]) => void;
  readonly crash: () => void;
  readonly restart: () => void;
  /** Starts a spike's extra load; returns what stops it. */
  readonly spike: (fault: Fault, index: number) => () => void;
}

/** Arms every fault's start and end on the clock, as its kind's mechanism plays it (pauses are outages, armed apart). */
export function scheduleFaults(faults: readonly Fault[], actions: FaultActions): void {
  const active: Fault[] = [];
  faults.forEach((fault, index) => {
    const endAt = fault.atMs + fault.durationMs;
    switch (faultKind(fault.kind).mechanism) {
      case "pause":
        return;
      case "restart":
        actions.clock.schedule(fault.atMs, actions.crash);
        actions.clock.schedule(endAt, actions.restart);
        return;
      case "load": {
        let stopSpike: (() => void) | undefined;
        actions.clock.schedule(fault.atMs, () => {
          stopSpike = actions.spike(fault, index);
        });
        actions.clock.schedule(endAt, () => stopSpike?.());
        return;
      }
      case "condition":
        actions.clock.schedule(fault.atMs, () => {
          active.push(fault);
          actions.setConditions(active);
        });
        actions.clock.schedule(endAt, () => {
          active.splice(active.indexOf(fault), 1);
          actions.setConditions(active);
        });
    }
  });
}

/** The extra load of a spike × factor: factor − 1 times the users, or the arrival rate. */
export function spikeLoad<C extends Pick<SimulationConfig, "users" | "arrivals">>(config: C, factor: number): C {
  const arrivals = config.arrivals;
  if (arrivals?.kind === "open") return { ...config, arrivals: { ...arrivals, ratePerSec: arrivals.ratePerSec * (factor - 1) } };
  return { ...config, users: Math.max(1, Math.round(config.users * (factor - 1))) };
}

/** The seed of the server's error injection: a stream of its own, apart from the clients'. */
export function serverSeed(seed: number): number {
  return (seed ^ 0x5f3759df) & 0x7fffffff;
}

/** SimulationHooks.haltOnceDown. */
export interface HaltOnceDown {
  readonly above: number;
  readonly notBeforeMs: number;
}

export interface SimulationHooks {
  /**
   * Called when a request ends (it succeeded, or its user gave it up), with the time from its
   * first attempt (what the user waited, retries included), whether it took more than one
   * try, and the time it ended. Requests still open at the end of the run are not reported.
   */
  readonly onRequestEnded?: (ok: boolean, latencyMs: number, retried: boolean, atMs: number) => void;
  /** Called when a request makes its first try (only with onRequestEnded): the requests still open at the end are the difference. */
  readonly onRequestStarted?: (atMs: number) => void;
  /** false: the client windows' reports carry no histograms (their summaries stay), for a caller that keeps none (choose). */
  readonly windowHistograms?: boolean;
  /**
   * End the run once the server is down for good: after a server report, from `notBeforeMs` on,
   * that shows more than `above` in service while its concurrency can only rise
   * (ServerModel.onlyRises), the run ends as the client window open then closes. The server stays
   * above `above` to the end, and nothing in service completes any more. For a caller that only asks whether
   * the server came back under `above`, and what came before (choose's measures). Only in a run
   * whose faults are its stops: another fault could empty the server.
   */
  readonly haltOnceDown?: HaltOnceDown | undefined;
}

/**
 * The delays armed over and over, for the clock's FIFO lanes: the client timeout (every
 * attempt) and, with a policy whose waits never vary (the fixed strategy), the retry wait.
 */
export function fifoDelays(config: Pick<SimulationConfig, "timeoutMs" | "retry">): number[] {
  const backoff = config.retry.backoff;
  const fixedWaitMs = policyDefinition(backoff.kind).fixedWaitMs?.(backoff);
  return fixedWaitMs === undefined ? [config.timeoutMs] : [config.timeoutMs, fixedWaitMs];
}

/** Starts a spike's extra load of `options` on `transport` (each spike its own seed); returns what stops it, for FaultActions. */
export function spikeStarter(
  options: LoadOptions,
  seed: number,
  clock: ManualClock,
  transport: Transport,
  observer: HerdObserver,
): FaultActions["spike"] {
  return (fault, index) => {
    const extra = spikeLoad(options, fault.factor);
    const load = createLoad(extra, clock, seededRandom(spikeSeed(seed, index)), transport, observer);
    load.start();
    return () => load.stop();
  };
}

/** The run's server model on the clock, with the error injection, horizon and service times its faults and protections call for. */
function serverOf(config: SimulationConfig, clock: ManualClock, protection: ProtectionConfig): ServerModel {
  const faults = config.faults ?? [];
  // Counting requests that cannot complete by the end assumes a delay that only grows and a
  // server that keeps what it has: faults that change its curve or empty it turn that off.
  const horizonMs = faults.some((fault) => !faultKind(fault.kind).keepsServerDelays) ? Infinity : config.durationMs;
  const errorsFault = faults.some((fault) => faultKind(fault.kind).injectsErrors);
  return createServerModel(config.model ?? { kind: "exponential", latency: config.latency }, clock, {
    cancelOnDisconnect: config.cancelOnDisconnect,
    maxConcurrency: config.maxConcurrency,
    errorInjection:
      protection.errorRate > 0 || errorsFault ? { rate: protection.errorRate, random: seededRandom(serverSeed(config.seed)) } : undefined,
    maxInService: config.maxInService,
    // Nothing after the end of the run is observed: what cannot complete by then is counted.
    horizonMs,
    serviceRandom: streamRandom(serverSeed(config.seed), 1),
    fixedServiceTime: !protection.deadlines && !faults.some((fault) => faultKind(fault.kind).changesServiceTime),
  });
}

/**
 * The herd's observer: the statistics alone, or with the request-level hooks beside them only
 * when asked for, so that ./sim pays nothing for request-level figures it does not print.
 */
function observerOf(stats: WindowStats, hooks: SimulationHooks, clock: ManualClock): HerdObserver {
  const onRequestEnded = hooks.onRequestEnded;
  if (onRequestEnded === undefined) return stats;
  return {
    attemptStarted: (isRetry, latenessMs) => stats.attemptStarted(isRetry, latenessMs),
    attemptNotSent: (isRetry) => stats.attemptNotSent(isRetry),
    attemptEnded: (result, latencyMs) => stats.attemptEnded(result, latencyMs),
    gaveUp: () => stats.gaveUp(),
    attemptRefused: (refusal) => stats.attemptRefused(refusal),
    requestEnded: (ok, latencyMs, retried) => onRequestEnded(ok, latencyMs, retried, clock.now()),
    requestStarted: () => hooks.onRequestStarted?.(clock.now()),
  };
}

/** What one run is made of: the clock, the server behind its network, the clients and their statistics. */
interface RunParts {
  readonly config: SimulationConfig;
  readonly clock: ManualClock;
  readonly server: ServerModel;
  readonly network: SimulatedNetwork;
  readonly stats: WindowStats;
  readonly observer: HerdObserver;
  readonly herd: Herd | OpenLoop;
  readonly onEvent: (event: SimulationEvent) => void;
  /** SimulationHooks.haltOnceDown, where the run's faults allow it. */
  readonly haltOnceDown: HaltOnceDown | undefined;
}

/**
 * The server's reports. Its reporter is a Node interval timer in a process that may be stopped:
 * it does not fire while stopped, fires once on resume, and continues from there.
 */
class ServerReports {
  readonly samples: ServerSample[] = [];
  private readonly parts: RunParts;
  private missed = false;
  /** The run was ended at haltOnceDown. */
  halted = false;

  constructor(parts: RunParts) {
    this.parts = parts;
  }

  /** Arms the first report; each report arms the next. */
  start(): void {
    this.parts.clock.schedule(this.parts.config.reportIntervalMs, this.report);
  }

  /** Whether a report was missed while the server was stopped or down; it is then due now, and no longer missed. */
  takeMissed(): boolean {
    const missed = this.missed;
    this.missed = false;
    return missed;
  }

  readonly report = (): void => {
    const { clock, server, network } = this.parts;
    if (network.isStopped || network.isDown) {
      this.missed = true;
      return;
    }
    const snapshot = server.snapshot();
    this.samples.push({
      atMs: clock.now(),
      concurrency: snapshot.concurrency,
      lastDelayMs: snapshot.lastDelayMs,
      peakConcurrency: snapshot.peakConcurrency,
      peakDelayMs: snapshot.peakDelayMs,
      abandoned: snapshot.abandoned,
      abandonedInService: snapshot.abandonedInService,
      cancelled: snapshot.cancelled,
      expired: snapshot.expired,
      queueLength: snapshot.queueLength,
      threadsBusy: snapshot.threadsBusy,
    });
    this.parts.onEvent({ kind: "server", atMs: clock.now(), snapshot });
    server.resetPeak();
    const halt = this.parts.haltOnceDown;
    // Down for good: the run ends as the client window open now closes (armClientWindows), so that no
    // window with answers from before the horizon is lost; every later one would hold none.
    if (halt !== undefined && clock.now() >= halt.notBeforeMs && server.onlyRises === true && snapshot.concurrency > halt.above) {
      this.halted = true;
      return;
    }
    clock.schedule(this.parts.config.reportIntervalMs, this.report);
  };
}

/** Arms the outages (the server stopped, SIGSTOP) and every other fault, as its kind's mechanism plays it. */
function armFaults(parts: RunParts, reports: ServerReports): void {
  const { config, clock, network } = parts;
  for (const outage of config.outages) {
    clock.schedule(outage.atMs, () => network.stop());
    // On SIGCONT Node runs its overdue timers before it polls for the queued connections:
    // the first report after a resume still shows the server before it accepted them.
    clock.schedule(outage.atMs + outage.durationMs, () => network.resume(reports.takeMissed() ? reports.report : undefined));
  }
  scheduleFaults(config.faults ?? [], {
    clock,
    setConditions: (active) => parts.server.setFaultConditions(conditionsOf(active)),
    crash: () => network.crash(),
    restart: () => {
      network.restart();
      // A restarted server reports from its start; the report it missed while down comes now.
      if (reports.takeMissed()) reports.report();
    },
    spike: spikeStarter(config, config.seed, clock, network.transport, parts.observer),
  });
}

/** Arms the client's windows: each closes, is reported, and arms the next while it fits in the run. */
function armClientWindows(parts: RunParts, reports: ServerReports): ClientWindow[] {
  const { config, clock, stats, herd } = parts;
  const windows: ClientWindow[] = [];
  const closeWindow = () => {
    const window = stats.closeWindow(clock.now());
    windows.push({
      startMs: window.startMs,
      endMs: window.endMs,
      okPerSec: perSecond(window.counts.ok, window),
      errorsPerSec: perSecond(window.counts.errors, window),
      timedoutPerSec: perSecond(window.counts.timedout, window),
      attemptsPerSec: perSecond(window.counts.attempts, window),
      retriesPerSec: perSecond(window.counts.retries, window),
    });
    parts.onEvent({ kind: "client", atMs: clock.now(), report: window, inFlight: herd.inFlight, openLoop: openLoopTotalsOf(herd) });
    if (reports.halted) clock.halt();
    else if (clock.now() + config.intervalMs <= config.durationMs) clock.schedule(config.intervalMs, closeWindow);
  };
  clock.schedule(config.intervalMs, closeWindow);
  return windows;
}

/** With open-loop arrivals: requests alive and arrivals dropped so far. */
function openLoopTotalsOf(herd: Herd | OpenLoop): OpenLoopTotals | undefined {
  return openLoopTotals(herd instanceof OpenLoop ? herd : undefined);
}

/** Stops the clients and the server, and gathers what the run measured. */
function finish(parts: RunParts, server: ServerSample[], client: ClientWindow[], haltedDown: boolean): SimulationResult {
  const { clock, herd, network } = parts;
  const { countedRequests, mostStoredRequests } = parts.server;
  herd.stop();
  parts.server.stop();
  return {
    server,
    client,
    totals: parts.stats.totals(clock.now()),
    events: clock.firedCount,
    droppedConnections: network.droppedConnections,
    serverTotals: parts.server.snapshot(),
    openLoop: openLoopTotalsOf(herd),
    outOfMemory: parts.server.outOfMemory,
    endMs: clock.now(),
    countedRequests,
    mostStoredRequests,
    haltedDown,
  };
}

/**
 * The crash experiment in virtual time: the very Herd, server model and statistics the real
 * programs run, on a manual clock, with a modelled network in between. Deterministic: the
 * same config gives the same events.
 */
export function simulate(
  config: SimulationConfig,
  onEvent: (event: SimulationEvent) => void = () => {},
  hooks: SimulationHooks = {},
): SimulationResult {
  const clock = new ManualClock(0, fifoDelays(config));
  const protection = config.protection ?? NO_PROTECTION;
  const server = serverOf(config, clock, protection);
  const network = new SimulatedNetwork(server, clock, config.backlog, {
    retryAfterMs: protection.retryAfterMs,
    dropShed: protection.dropShed,
    deadline: protection.deadlines ? { clock, timeoutMs: config.timeoutMs } : undefined,
  });
  // A real server whose memory is full dies; so ends the run.
  network.onOutOfMemory = () => clock.halt();
  const stats = new WindowStats(0, hooks.windowHistograms !== false);
  const observer = observerOf(stats, hooks, clock);
  const herd = createLoad(config, clock, seededRandom(config.seed), network.transport, observer);
  const haltOnceDown = (config.faults ?? []).length === 0 ? hooks.haltOnceDown : undefined;
  const parts: RunParts = { config, clock, server, network, stats, observer, herd, onEvent, haltOnceDown };
  const reports = new ServerReports(parts);
  reports.start();
  armFaults(parts, reports);
  const client = armClientWindows(parts, reports);
  herd.start();
  clock.runUntil(config.durationMs);
  return finish(parts, reports.samples, client, reports.halted);
}
