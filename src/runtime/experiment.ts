import { createServer } from "node:net";
import { FatalError } from "../cli/usage-error.ts";
import { ChildProgram } from "./child-program.ts";
import type { Launcher } from "./launcher.ts";
import { setTimeout as sleep } from "node:timers/promises";
import { clientWindow, parseClientLine, readClientWindows, readClientWindowsOnGrid } from "../contracts/client-line.ts";
import { parseServerLine, readServerSamples, type ServerLine, serverSample } from "../contracts/server-line.ts";
import type { ClientWindow, Phases, ServerSample } from "../model/timeline.ts";
import type { StrategyRun } from "../strategies/runs.ts";
import { type Fault, formatFault } from "../model/faults/fault-schedule.ts";
import { faultKind, isControlledKind, playedAs } from "../model/faults/kinds.ts";
import { formatDuration } from "../cli/duration.ts";
import { addExtraLoad } from "../model/extra-load.ts";
import { spikeSeed } from "../model/faults/spike-seed.ts";
import { activeOf, formatActiveFaults } from "../model/faults/control.ts";
import { notStarted, type PlayedServer, ServerProcess } from "./server-process.ts";
import type { TargetService } from "./target-service.ts";
import type { WatchedService } from "../model/verdict.ts";
import { type WatchPlan, Watcher } from "./watcher.ts";

export interface ExperimentPlan {
  readonly strategy: StrategyRun;
  /** The one stop of the article's experiment, when `faults` is absent: SIGSTOP after steadyMs, SIGCONT outageMs later. */
  readonly steadyMs: number;
  readonly outageMs: number;
  /** A fault schedule (src/model/faults), times from the steady state's start; it replaces steadyMs and outageMs. */
  readonly faults?: readonly Fault[] | undefined;
  /** Observation after the last fault's end. */
  readonly observeMs: number;
  readonly serverArgs: readonly string[];
  /**
   * A chain of real servers (docs/tiers.md), the edge first: each tier's own ./server flags (its
   * model and its `-upstream-…` policy); the demo adds each middle tier's `-upstream` URL. Without
   * it, one server with serverArgs. A fault strikes the tier it names (none: the edge).
   */
  readonly tiers?: readonly TierPlan[] | undefined;
  readonly clientArgs: readonly string[];
  /**
   * A service the user runs (demo -target, choose -validate -target) instead of ./server: the
   * clients call its URL, a stop or a crash strikes its process group, and a watcher's answers
   * stand for a server's reports. The program starts it before the first run and stops it after the last.
   */
  readonly target?: TargetPlan | undefined;
  /** The herd's load and seed, for a spike's extra clients (needed only with a spike). */
  readonly load?: { readonly arrivals: "closed" | "open"; readonly clients: number; readonly ratePerSec: number; readonly seed: number };
}

export interface TargetPlan {
  readonly service: TargetService;
  readonly watch: WatchPlan;
}

export interface TierPlan {
  readonly name: string;
  readonly serverArgs: readonly string[];
}

/** What one tier's server printed and was: its JSON lines, per incarnation (a crash starts another), and their pids. */
export interface TierRecord {
  readonly name: string;
  readonly incarnationLines: string[][];
  readonly pids: number[];
}

export type Phase = "starting" | "steady" | "outage" | "faults" | "observe" | "stopping";

/** What the programs report as they print it, for a live view. Times in ms from the run's start. */
export type LiveRecord =
  | { readonly kind: "phase"; readonly phase: "steady" | "outage" | "observe"; readonly atMs: number }
  /** A fault of a schedule begins (times from the run's start); not sent for the article's one stop, which is the outage phase. */
  | { readonly kind: "fault"; readonly fault: Fault }
  | { readonly kind: "server"; readonly sample: ServerSample }
  | { readonly kind: "client"; readonly window: ClientWindow & { readonly throttledPerSec?: number | undefined } }
  /** A spike's extra users (their own ./client), window by window: the herd's chart shows them beside its own. */
  | { readonly kind: "spike-client"; readonly window: ClientWindow }
  /** A chain only: the attempts per second that reached a tier (its callers' attempts), at the end of the caller's window. */
  | { readonly kind: "tier"; readonly tier: string; readonly index: number; readonly atMs: number; readonly arrivalsPerSec: number };

export interface Progress {
  readonly strategy: string;
  readonly phase: Phase;
  readonly phaseLeftMs: number;
  readonly client: ClientWindow | undefined;
  readonly server: ServerSample | undefined;
}

/** Everything one experiment recorded; times in ms from `startEpochMs`. */
export interface ExperimentRecord {
  readonly strategy: string;
  readonly startEpochMs: number;
  readonly phases: Phases;
  readonly server: ServerSample[];
  readonly client: ClientWindow[];
  /** The raw JSON lines of both programs, as they printed them (every incarnation of a server that crashed). */
  readonly serverLines: string[];
  readonly clientLines: string[];
  /** Each spike's extra client's lines; their counts are added into `client` (src/model/extra-load.ts). */
  readonly spikeClientLines: string[][];
  /** The first server's pid, and every incarnation's. */
  readonly serverPid: number;
  readonly serverPids: number[];
  readonly clientPid: number;
  readonly spikePids: number[];
  /** When the users started (the steady state's start), ms from `startEpochMs`. */
  readonly runStartMs: number;
  /** Every tier's lines, the edge (the one server) first. */
  readonly tiers: TierRecord[];
  /** A target's watcher's answers (demo -target); undefined for ./server. */
  readonly watched?: WatchedService | undefined;
}

/**
 * Runs the article's experiment once, by itself: start ./server and ./client as a user
 * would (with -json), wait for steady state, play the fault schedule on the real programs
 * (stop: SIGSTOP and SIGCONT; crash: the server's process group killed and started again on
 * the same port; capacity, slow, errors: through the server's fault control; spike: extra
 * client processes for the fault's length), observe, then stop every program by pid and
 * check that nothing is left running or listening.
 */
export async function runExperiment(plan: ExperimentPlan, options: ExperimentOptions): Promise<ExperimentRecord> {
  const run = new ExperimentRun(plan, options);
  options.signal.addEventListener("abort", run.abandon, { once: true });
  try {
    return await run.play();
  } catch (error) {
    await run.abandonAndWait();
    throw error;
  } finally {
    options.signal.removeEventListener("abort", run.abandon);
    run.unfollowAll();
  }
}

export interface ExperimentOptions {
  signal: AbortSignal;
  onProgress: (progress: Progress) => void;
  /** With a chain, `tiers` names every tier's pid, the edge first. */
  onStarted: (pids: { server: number; client: number; tiers?: readonly { name: string; pid: number }[] }) => void;
  launcher: Launcher;
  /** Called with every report line of both programs as it arrives, and at each phase and fault. */
  onRecord?: (record: LiveRecord) => void;
  /** Told what each fault of a schedule did, in a line: which pid was stopped, killed, started. */
  onFault?: (message: string) => void;
}

/** What a fault does on the real programs at its start and at its end. */
interface FaultPlay {
  readonly start: () => Promise<void> | void;
  readonly end: () => Promise<void> | void;
}

/** One step of the schedule: order 0 is an end, 1 a start, so that at the same instant one fault ends before the next begins. */
interface TimedAction {
  readonly atMs: number;
  readonly order: 0 | 1;
  readonly fault: Fault;
  readonly run: () => Promise<void> | void;
}

/** One run of runExperiment: its programs, what follows their lines, and the schedule's state. */
class ExperimentRun {
  private readonly plan: ExperimentPlan;
  private readonly options: ExperimentOptions;
  private readonly startEpochMs = Date.now();
  private readonly schedule: readonly Fault[];
  private readonly onlyOneStop: boolean;
  private readonly chain: readonly TierPlan[];
  private readonly isChain: boolean;
  private readonly servers: PlayedServer[];
  private clientLaunch: ReturnType<Launcher> | undefined;
  private client: ChildProgram | undefined;
  /** The spikes' extra clients, by fault; each stopped by its own pid at its fault's end. */
  private readonly spikeByFault = new Map<number, ChildProgram>();
  private readonly spikesStopped = new Set<ChildProgram>();
  private readonly stopping: Promise<unknown>[] = [];
  /** The condition faults in force now, on every tier. */
  private readonly active: Fault[] = [];
  private readonly unfollow: (() => void)[] = [];
  /** A target's watcher, from the users' start to the end; and what it saw. */
  private watching: Watcher | undefined;
  private watched: WatchedService | undefined;
  // A line that breaks its contract, seen while following: it ends the run at the next check, with every program stopped.
  private brokenLine: unknown;

  constructor(plan: ExperimentPlan, options: ExperimentOptions) {
    this.plan = plan;
    this.options = options;
    this.schedule = scheduleOf(plan);
    this.onlyOneStop = this.schedule.length === 1 && playedAs(this.schedule[0]!, "pause");
    this.chain = plan.tiers ?? [{ name: "server", serverArgs: plan.serverArgs }];
    this.isChain = plan.tiers !== undefined;
    const serverLaunch = options.launcher("server");
    this.servers =
      plan.target !== undefined
        ? [plan.target.service]
        : this.chain.map((tier, index) => {
            const controlled = this.schedule.some((fault) => isControlledKind(fault.kind) && this.tierOf(fault) === index);
            return new ServerProcess(
              (listen) =>
                new ChildProgram(this.label(index), serverLaunch.command, [
                  ...serverLaunch.args,
                  ...["-listen", listen, "-json"],
                  ...(controlled ? ["-admin-listen", "127.0.0.1:0"] : []),
                  // A middle tier calls the next one, started before it; a crash starts it again on the same port.
                  ...(index < this.chain.length - 1 ? ["-upstream", `http://127.0.0.1:${this.servers[index + 1]!.listeningPort}/api`] : []),
                  ...tier.serverArgs,
                ]),
              controlled,
              (incarnation) => this.followServer(index, incarnation),
            );
          });
  }

  /** Starts the programs, plays the schedule, observes, stops them all, and returns what they printed. */
  async play(): Promise<ExperimentRecord> {
    const { client, runStartMs } = await this.startPrograms();
    const target = this.plan.target;
    if (target !== undefined) this.watching = new Watcher(target.service.url, target.watch, this.startEpochMs);
    const faults = this.schedule.map((fault) => ({ ...fault, atMs: runStartMs + fault.atMs }));
    this.startSpikes(faults);
    const firstStartMs = Math.min(...faults.map((fault) => fault.atMs));
    const lastEndMs = Math.max(...faults.map((fault) => fault.atMs + fault.durationMs));
    const phases: Phases = {
      stopAtMs: firstStartMs,
      resumeAtMs: lastEndMs,
      endMs: lastEndMs + this.plan.observeMs,
      ...(this.onlyOneStop ? {} : { faults, runStartMs }),
    };
    await this.playSchedule(this.timedActions(faults), phases, runStartMs);
    await sleep(Math.max(0, this.startEpochMs + phases.endMs + CLIENT_TAIL_MS - Date.now()));
    await this.stopAll(client);
    const record = this.record(client, phases, runStartMs);
    const lateMs = (record.client[0]?.startMs ?? runStartMs) - runStartMs;
    if (lateMs > LATE_CLIENT_MS)
      this.tell(
        `the client began ${formatDuration(Math.round(lateMs))} after the run's start (its threads came up late): ` +
          "its first window is short, and so is the steady phase its users had",
      );
    return record;
  }

  /** Kills every program at once: the run was interrupted, or failed. */
  readonly abandon = (): void => {
    void this.watching?.stop();
    for (const tier of this.servers) tier.kill();
    this.client?.kill();
    for (const spike of this.spikes()) spike.kill();
  };

  /** abandon(), then waits until every program it killed has exited. */
  async abandonAndWait(): Promise<void> {
    this.abandon();
    await Promise.all([
      ...this.servers.flatMap((tier) => tier.incarnations).map((program) => program.exited),
      this.client?.exited,
      ...this.spikes().map((spike) => spike.exited),
    ]);
  }

  unfollowAll(): void {
    for (const stop of this.unfollow) stop();
  }

  /**
   * The servers, the bottom first (each middle tier is started with the address of the one below it), then the users' client,
   * and when the run starts (ms from startEpochMs): the instant the client's window grid is anchored on.
   */
  private async startPrograms(): Promise<{ client: ChildProgram; runStartMs: number }> {
    for (const tier of [...this.servers].reverse()) await tier.start();
    this.clientLaunch = this.options.launcher("client");
    // The client's windows start once its threads are up, after its first line: anchored on an instant the demo names,
    // the steady phase holds whole windows (a stop a fraction of a second before the grid's third boundary left the
    // baseline one 5 s window, ±4.5 % of noise at 1000 users, and judged exponential backoff "recovering").
    const runStartEpochMs = Date.now() + CLIENT_START_MARGIN_MS;
    const client = this.startClient(["-start-at", String(runStartEpochMs)]);
    this.client = client;
    const onRecord = this.options.onRecord;
    if (onRecord !== undefined) {
      this.followClient(client, CLIENT_OUTPUT, (parsed) => {
        if (parsed.kind !== "window") return;
        const window = clientWindow(parsed, this.startEpochMs);
        onRecord({ kind: "client", window: { ...window, throttledPerSec: parsed.throttledPerSec } });
        // The users' attempts are the arrivals at the edge.
        if (this.isChain)
          onRecord({ kind: "tier", tier: this.chain[0]!.name, index: 0, atMs: window.endMs, arrivalsPerSec: parsed.attemptsPerSec });
      });
    }
    await client.waitForLine(/^client: /, { stream: "stderr", timeoutMs: 30_000 }).catch(notStarted);
    this.options.onStarted({
      server: this.servers[0]!.program?.pid ?? 0,
      client: client.pid,
      ...(this.isChain ? { tiers: this.servers.map((tier, index) => ({ name: this.chain[index]!.name, pid: tier.program!.pid })) } : {}),
    });
    return { client, runStartMs: runStartEpochMs - this.startEpochMs };
  }

  private startClient(extraArgs: readonly string[]): ChildProgram {
    const clientLaunch = this.clientLaunch!;
    return new ChildProgram("client", clientLaunch.command, [
      ...clientLaunch.args,
      ...["-url", this.plan.target?.service.url.href ?? `http://127.0.0.1:${this.servers[0]!.listeningPort}/api`, "-json"],
      // Enough threads for a large herd, so that a verdict is never the client's own lag; the user's -workers wins.
      ...["-workers", "auto"],
      ...this.plan.strategy.clientArgs,
      ...this.plan.clientArgs,
      ...extraArgs,
    ]);
  }

  /**
   * A spike's client is started now and waits for its fault's start (-start-at): a Node
   * process takes a second or more to start on a busy machine, which would cut the spike short.
   */
  private startSpikes(faults: readonly Fault[]): void {
    const onRecord = this.options.onRecord;
    faults.forEach((fault, index) => {
      if (!playedAs(fault, "load")) return;
      const spike = this.startClient([...spikeArgs(this.plan, fault, index), "-start-at", String(this.startEpochMs + fault.atMs)]);
      this.spikeByFault.set(index, spike);
      if (onRecord !== undefined)
        this.followClient(spike, SPIKE_OUTPUT, (parsed) => {
          if (parsed.kind === "window") onRecord({ kind: "spike-client", window: clientWindow(parsed, this.startEpochMs) });
        });
      this.tell(`${fault.kind}: extra client pid ${spike.pid} started, waiting for ${formatFault(this.schedule[index]!, formatDuration)}`);
    });
  }

  /** Follows a server incarnation's lines for the live view: the edge's samples, and a middle tier's calls to the tier below. */
  private followServer(index: number, incarnation: ChildProgram): void {
    const onRecord = this.options.onRecord;
    if (onRecord === undefined) return;
    // A middle tier's upstream attempts are the arrivals at the tier below: each line's since the previous one.
    if (this.isChain && index < this.chain.length - 1) {
      let previous: ServerLine | undefined;
      this.followLines(incarnation, (text, line) => {
        const parsed = parseServerLine(text, { file: SERVER_OUTPUT, line });
        const before = previous;
        previous = parsed;
        if (before === undefined || parsed.epochMs <= before.epochMs) return;
        const sent = (parsed.upstream?.attempts ?? 0) - (before.upstream?.attempts ?? 0);
        const arrivalsPerSec = (sent * 1000) / (parsed.epochMs - before.epochMs);
        onRecord({
          kind: "tier",
          tier: this.chain[index + 1]!.name,
          index: index + 1,
          atMs: parsed.epochMs - this.startEpochMs,
          arrivalsPerSec,
        });
      });
    }
    // The live view's server is the edge: the server the users call.
    if (index > 0) return;
    this.followLines(incarnation, (text, line) =>
      onRecord({ kind: "server", sample: serverSample(parseServerLine(text, { file: SERVER_OUTPUT, line }), this.startEpochMs) }),
    );
  }

  /** Follows a client's JSON lines, each parsed by its contract. */
  private followClient(program: ChildProgram, file: string, onLine: (parsed: ReturnType<typeof parseClientLine>) => void): void {
    this.followLines(program, (text, line) => onLine(parseClientLine(text, { file, line })));
  }

  /** Follows a program's JSON lines until the run ends; a line that breaks its contract is kept for the next check. */
  private followLines(program: ChildProgram, onLine: (text: string, line: number) => void): void {
    this.unfollow.push(
      follow(program, (text, line) => {
        try {
          onLine(text, line);
        } catch (error) {
          this.brokenLine ??= error;
        }
      }),
    );
  }

  /** What runs at each fault's start and end, in time order (an end before a start at the same instant). */
  private timedActions(faults: readonly Fault[]): TimedAction[] {
    const actions = faults.flatMap((fault, index): TimedAction[] => {
      const { start, end } = this.playOf(fault, index);
      return [
        { atMs: fault.atMs, order: 1, fault, run: start },
        { atMs: fault.atMs + fault.durationMs, order: 0, fault, run: end },
      ];
    });
    return actions.sort((a, b) => a.atMs - b.atMs || a.order - b.order);
  }

  private playOf(fault: Fault, index: number): FaultPlay {
    switch (faultKind(fault.kind).mechanism) {
      case "pause":
        return this.pause(fault);
      case "restart":
        return this.restart(fault);
      case "load":
        return this.load(fault, index);
      case "condition":
        return this.condition(fault);
    }
  }

  /** SIGSTOP to the struck tier's server at the start, SIGCONT at the end. */
  private pause(fault: Fault): FaultPlay {
    const tier = this.tierOf(fault);
    const send = (signal: "SIGSTOP" | "SIGCONT", what: string) => () => {
      const struck = this.servers[tier]!;
      if (!struck.signal(signal)) throw diedEarly(struck.program!);
      this.tell(`${what}: ${signal} to ${this.label(tier)} ${struck.signalledName}`);
    };
    return { start: send("SIGSTOP", fault.kind), end: send("SIGCONT", `${fault.kind} over`) };
  }

  /** The struck tier's server killed with its group at the start, started again on the same port at the end. */
  private restart(fault: Fault): FaultPlay {
    const tier = this.tierOf(fault);
    const struck = this.servers[tier]!;
    return {
      start: async () => {
        const struckName = struck.signalledName;
        await struck.crash();
        this.tell(
          `${fault.kind}: ${this.label(tier)} ${struckName} killed with its process group (SIGKILL); connections to port ${struck.listeningPort} are refused`,
        );
      },
      end: async () => {
        await struck.start();
        this.tell(`${fault.kind} over: ${this.label(tier)} started again on port ${struck.listeningPort}, ${struck.signalledName}`);
      },
    };
  }

  /** The spike's extra client, started before the schedule, sends from the start and is stopped at the end. */
  private load(fault: Fault, index: number): FaultPlay {
    return {
      start: () => {
        const spike = this.spikeByFault.get(index)!;
        this.tell(`${fault.kind}: extra client pid ${spike.pid} sending (${spikeArgs(this.plan, fault, index).slice(0, 2).join(" ")})`);
      },
      end: () => {
        const spike = this.spikeByFault.get(index)!;
        if (!spike.running) throw diedEarly(spike);
        this.spikesStopped.add(spike);
        this.stopping.push(spike.stop());
        this.tell(`${fault.kind} over: extra client pid ${spike.pid} stopped`);
      },
    };
  }

  /** The struck tier's fault control holds the tier's conditions in force: this one's added at the start, taken off at the end. */
  private condition(fault: Fault): FaultPlay {
    const tier = this.tierOf(fault);
    const control = faultControlName(this.isChain ? this.chain[tier]!.name : undefined);
    const setControlled = () => {
      const inForce = activeOf(this.active.filter((other) => this.tierOf(other) === tier));
      this.servers[tier]!.setFaults(inForce);
      return formatActiveFaults(inForce);
    };
    return {
      start: () => {
        this.active.push(fault);
        this.tell(`${fault.kind}: set through ${control}: ${setControlled()}`);
      },
      end: () => {
        this.active.splice(this.active.indexOf(fault), 1);
        this.tell(`${fault.kind} over: ${control} now has ${setControlled()}`);
      },
    };
  }

  /** Waits for each action's time and runs it, telling the live view the phases and the faults, then observes. */
  private async playSchedule(actions: readonly TimedAction[], phases: Phases, runStartMs: number): Promise<void> {
    const onRecord = this.options.onRecord;
    // The client's threads come up while it waits for the run's start (-start-at).
    await this.phase("starting", runStartMs);
    onRecord?.({ kind: "phase", phase: "steady", atMs: runStartMs });
    let phaseName: Phase = "steady";
    for (const [step, action] of actions.entries()) {
      await this.phase(phaseName, action.atMs);
      await action.run();
      if (action.order === 1 && !this.onlyOneStop) onRecord?.({ kind: "fault", fault: action.fault });
      if (step === 0) {
        phaseName = this.onlyOneStop ? "outage" : "faults";
        if (this.onlyOneStop) onRecord?.({ kind: "phase", phase: "outage", atMs: phases.stopAtMs });
      }
    }
    onRecord?.({ kind: "phase", phase: "observe", atMs: phases.resumeAtMs });
    await this.phase("observe", phases.endMs);
    this.report("stopping", phases.endMs);
  }

  /** Waits until `endsAtMs`, reporting progress, and fails if a program dies meanwhile. */
  private async phase(name: Phase, endsAtMs: number): Promise<void> {
    const untilEpochMs = this.startEpochMs + endsAtMs;
    while (Date.now() < untilEpochMs) {
      if (this.options.signal.aborted) throw new Error("interrupted");
      if (this.brokenLine !== undefined) throw this.brokenLine;
      for (const tier of this.servers) if (tier.failure !== undefined) throw tier.failure;
      for (const program of this.running()) if (program !== undefined && !program.running) throw diedEarly(program);
      this.report(name, endsAtMs);
      await new Promise((wake) => setTimeout(wake, Math.min(250, untilEpochMs - Date.now())));
    }
  }

  private report(phase: Phase, phaseEndsAtMs: number): void {
    this.options.onProgress({
      strategy: this.plan.strategy.name,
      phase,
      phaseLeftMs: Math.max(0, this.startEpochMs + phaseEndsAtMs - Date.now()),
      client: readClientWindows(
        this.client!.stdout.map((line) => line.text),
        this.startEpochMs,
        CLIENT_OUTPUT,
      ).at(-1),
      server: readServerSamples(this.servers[0]!.stdoutLines(), this.startEpochMs, SERVER_OUTPUT).at(-1),
    });
  }

  /** Every program that should be running now: the servers' current incarnations, the client, the spikes not yet over. */
  private running(): (ChildProgram | undefined)[] {
    return [...this.servers.map((tier) => tier.program), this.client, ...this.spikes().filter((spike) => !this.spikesStopped.has(spike))];
  }

  /** Stops every program by its pid and checks that none is left running or listening. */
  private async stopAll(client: ChildProgram): Promise<void> {
    await Promise.all(this.stopping);
    for (const tier of this.servers) await tier.settled();
    await client.stop();
    // A chain's tiers finish the calls they hold for the users before they stop, so that each tier's counts are whole.
    if (this.isChain) await drained(this.servers as ServerProcess[], Date.now(), this.options.signal);
    // A target runs on between runs: the program stops it after the last.
    const own = this.plan.target === undefined ? this.servers : [];
    for (const tier of own) await tier.stop();
    this.watched = await this.watching?.stop();
    const programs = [...own.flatMap((tier) => tier.incarnations), client, ...this.spikes()];
    await ensureGone(
      programs,
      own.map((tier) => tier.listeningPort),
    );
  }

  /** What the stopped programs printed, read by their contracts. */
  private record(client: ChildProgram, phases: Phases, runStartMs: number): ExperimentRecord {
    const server = this.servers[0]!;
    const { startEpochMs } = this;
    const serverOutput = server.stdoutLines();
    const clientOutput = client.stdout.map((line) => line.text);
    const spikeOutputs = this.spikes().map((spike) => spike.stdout.map((line) => line.text));
    const extraWindows = spikeOutputs.flatMap((output) => readClientWindowsOnGrid(output, startEpochMs, SPIKE_OUTPUT));
    return {
      strategy: this.plan.strategy.name,
      startEpochMs,
      phases,
      server: readServerSamples(serverOutput, startEpochMs, SERVER_OUTPUT),
      client: addExtraLoad(readClientWindowsOnGrid(clientOutput, startEpochMs, CLIENT_OUTPUT), extraWindows),
      serverLines: jsonLines(serverOutput),
      clientLines: jsonLines(clientOutput),
      spikeClientLines: spikeOutputs.map(jsonLines),
      // A target given by its pid: no incarnation of the demo's.
      serverPid: server.incarnations[0]?.pid ?? 0,
      serverPids: server.incarnations.map((program) => program.pid),
      clientPid: client.pid,
      spikePids: this.spikes().map((spike) => spike.pid),
      runStartMs,
      tiers: this.servers.map((tier, index) => ({
        name: this.chain[index]!.name,
        incarnationLines: tier.incarnations.map((program) => jsonLines(program.stdout.map((line) => line.text))),
        pids: tier.incarnations.map((program) => program.pid),
      })),
      watched: this.watched,
    };
  }

  private spikes(): ChildProgram[] {
    return [...this.spikeByFault.values()];
  }

  private tell(message: string): void {
    this.options.onFault?.(message);
  }

  /** How messages name a tier's server: "server" alone for the one server, as always. */
  private label(tier: number): string {
    if (this.plan.target !== undefined) return "the target";
    return this.isChain ? `${this.chain[tier]!.name} server` : "server";
  }

  private tierOf(fault: Fault): number {
    return fault.tier === undefined ? 0 : this.chain.findIndex((tier) => tier.name === fault.tier);
  }
}

/** A program's JSON lines, among its others. */
const jsonLines = (output: readonly string[]): string[] => output.filter((line) => line.startsWith("{"));

/** The run's faults, times from the steady state's start: the plan's schedule, or its one stop. */
export function scheduleOf(plan: Pick<ExperimentPlan, "faults" | "steadyMs" | "outageMs">): readonly Fault[] {
  return plan.faults ?? [{ kind: "stop", atMs: plan.steadyMs, durationMs: plan.outageMs, factor: 1 }];
}

/** How a fault's message names the fault control it went through: "the fault control" of the one server, a tier's in a chain. */
const faultControlName = (tier: string | undefined) => (tier === undefined ? "the fault control" : `${tier}'s fault control`);

/**
 * A spike's extra client: the herd's users × (factor − 1) (or its open-loop rate × (factor −
 * 1)), with a seed of its own, so that its users do not repeat the herd's schedule.
 */
export function spikeArgs(plan: Pick<ExperimentPlan, "load">, fault: Fault, index: number): string[] {
  if (plan.load === undefined) throw new Error("a spike needs the plan's load");
  const extra = fault.factor - 1;
  const load =
    plan.load.arrivals === "open"
      ? ["-rate", String(plan.load.ratePerSec * extra)]
      : ["-clients", String(Math.max(1, Math.round(plan.load.clients * extra)))];
  return [...load, "-seed", String(spikeSeed(plan.load.seed, index))];
}

/** How messages name the programs' output: a line that breaks its contract is a bug in that program. */
const SERVER_OUTPUT = "the server's stdout";
const CLIENT_OUTPUT = "the client's stdout";
const SPIKE_OUTPUT = "a spike client's stdout";

/** Calls `onLine` with each JSON line a program prints on stdout (and its line number), once, as it arrives. */
function follow(program: ChildProgram, onLine: (text: string, line: number) => void): () => void {
  let next = 0;
  return program.onChange(() => {
    while (next < program.stdout.length) {
      const text = program.stdout[next++]!.text;
      if (text.startsWith("{")) onLine(text, next);
    }
  });
}

function diedEarly(program: ChildProgram): FatalError {
  return new FatalError(`${program.name} (pid ${program.pid}) ended early${program.said()}`);
}

/** How long a chain's tiers may take to finish their calls after the users stop: bounds a hang, never a result. */
const DRAIN_TIMEOUT_MS = 15_000;
/**
 * How far ahead of its start the client's windows are anchored: time for Node and its worker threads to come up
 * (0.4–0.6 s here, more on a loaded machine). A client slower than that still reports on the same grid, its first
 * window short, and the demo says so.
 */
const CLIENT_START_MARGIN_MS = 2_000;
/** A client whose first window began later than this after the run's start is said to have come up late. */
const LATE_CLIENT_MS = 100;
/**
 * How long after the run's end the client is stopped. The end falls on a grid point: stopped there, its last window
 * would be a few ms long, which the client does not print (under 100 ms, MIN_FINAL_WINDOW_MS), and its counts would be
 * lost to the tiers' figures. That window ends after the run and is not judged.
 */
const CLIENT_TAIL_MS = 250;

/**
 * Waits until every running tier has printed a line after `sinceEpochMs` with nothing in
 * service and no call in flight (its counts then final), or DRAIN_TIMEOUT_MS.
 */
async function drained(servers: readonly ServerProcess[], sinceEpochMs: number, signal: AbortSignal): Promise<void> {
  const idle = (tier: ServerProcess) => {
    const text = tier.program?.stdout.filter((line) => line.text.startsWith("{")).at(-1)?.text;
    if (tier.program === undefined || text === undefined) return true;
    const line = parseServerLine(text, { file: SERVER_OUTPUT, line: 0 });
    return line.epochMs > sinceEpochMs && line.concurrency === 0 && (line.queueLength ?? 0) === 0 && (line.upstream?.inFlight ?? 0) === 0;
  };
  while (!servers.every(idle) && Date.now() < sinceEpochMs + DRAIN_TIMEOUT_MS && !signal.aborted) {
    await new Promise((wake) => setTimeout(wake, 100));
  }
}

/** Every pid gone and every port free again, or an error saying what is left. */
async function ensureGone(programs: readonly ChildProgram[], ports: readonly number[]): Promise<void> {
  for (const program of programs) {
    try {
      process.kill(program.pid, 0);
      throw new FatalError(`${program.name} (pid ${program.pid}) is still running`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  }
  for (const port of ports) {
    await new Promise<void>((resolveFree, reject) => {
      const probe = createServer();
      probe.once("error", () => reject(new FatalError(`port ${port} is still in use after the run`)));
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolveFree()));
    });
  }
}
