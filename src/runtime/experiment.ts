import { createServer } from "node:net";
import { FatalError } from "../cli/usage-error.ts";
import { ChildProgram } from "./child-program.ts";
import type { Launcher } from "./launcher.ts";
import { clientWindow, parseClientLine, readClientWindows } from "../contracts/client-line.ts";
import { parseServerLine, readServerSamples, type ServerLine, serverSample } from "../contracts/server-line.ts";
import type { ClientWindow, Phases, ServerSample } from "../model/timeline.ts";
import type { StrategyRun } from "../strategies/runs.ts";
import { type Fault, formatFault } from "../model/faults/fault-schedule.ts";
import { faultKind, isControlledKind, playedAs } from "../model/faults/kinds.ts";
import { formatDuration } from "../cli/duration.ts";
import { addExtraLoad } from "../model/extra-load.ts";
import { spikeSeed } from "../model/faults/spike-seed.ts";
import { activeOf, formatActiveFaults } from "../model/faults/control.ts";
import { notStarted, ServerProcess } from "./server-process.ts";

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
  /** The herd's load and seed, for a spike's extra clients (needed only with a spike). */
  readonly load?: { readonly arrivals: "closed" | "open"; readonly clients: number; readonly ratePerSec: number; readonly seed: number };
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
}

/**
 * Runs the article's experiment once, by itself: start ./server and ./client as a user
 * would (with -json), wait for steady state, play the fault schedule on the real programs
 * (stop: SIGSTOP and SIGCONT; crash: the server's process group killed and started again on
 * the same port; capacity, slow, errors: through the server's fault control; spike: extra
 * client processes for the fault's length), observe, then stop every program by pid and
 * check that nothing is left running or listening.
 */
export async function runExperiment(
  plan: ExperimentPlan,
  options: {
    signal: AbortSignal;
    onProgress: (progress: Progress) => void;
    /** With a chain, `tiers` names every tier's pid, the edge first. */
    onStarted: (pids: { server: number; client: number; tiers?: readonly { name: string; pid: number }[] }) => void;
    launcher: Launcher;
    /** Called with every report line of both programs as it arrives, and at each phase and fault. */
    onRecord?: (record: LiveRecord) => void;
    /** Told what each fault of a schedule did, in a line: which pid was stopped, killed, started. */
    onFault?: (message: string) => void;
  },
): Promise<ExperimentRecord> {
  const startEpochMs = Date.now();
  const schedule = scheduleOf(plan);
  const onlyOneStop = schedule.length === 1 && playedAs(schedule[0]!, "pause");
  const serverLaunch = options.launcher("server");
  const onRecord = options.onRecord;
  const unfollow: (() => void)[] = [];
  // A line that breaks its contract, seen while following: it ends the run at the next check, with every program stopped.
  let brokenLine: unknown;
  const live = (read: () => void) => {
    try {
      read();
    } catch (error) {
      brokenLine ??= error;
    }
  };
  const chain = plan.tiers ?? [{ name: "server", serverArgs: plan.serverArgs }];
  const isChain = plan.tiers !== undefined;
  // How messages name a tier's server: "server" alone for the one server, as always.
  const label = (tier: number) => (isChain ? `${chain[tier]!.name} server` : "server");
  const tierOf = (fault: Fault) => (fault.tier === undefined ? 0 : chain.findIndex((tier) => tier.name === fault.tier));
  const servers: ServerProcess[] = chain.map((tier, index) => {
    const controlled = schedule.some((fault) => isControlledKind(fault.kind) && tierOf(fault) === index);
    return new ServerProcess(
      (listen) =>
        new ChildProgram(label(index), serverLaunch.command, [
          ...serverLaunch.args,
          ...["-listen", listen, "-json"],
          ...(controlled ? ["-admin-listen", "127.0.0.1:0"] : []),
          // A middle tier calls the next one, started before it; a crash starts it again on the same port.
          ...(index < chain.length - 1 ? ["-upstream", `http://127.0.0.1:${servers[index + 1]!.listeningPort}/api`] : []),
          ...tier.serverArgs,
        ]),
      controlled,
      (incarnation) => {
        if (onRecord === undefined) return;
        // A middle tier's upstream attempts are the arrivals at the tier below: each line's since the previous one.
        if (isChain && index < chain.length - 1) {
          let previous: ServerLine | undefined;
          unfollow.push(
            follow(incarnation, (text, line) =>
              live(() => {
                const parsed = parseServerLine(text, { file: SERVER_OUTPUT, line });
                const before = previous;
                previous = parsed;
                if (before === undefined || parsed.epochMs <= before.epochMs) return;
                const sent = (parsed.upstream?.attempts ?? 0) - (before.upstream?.attempts ?? 0);
                const arrivalsPerSec = (sent * 1000) / (parsed.epochMs - before.epochMs);
                onRecord({
                  kind: "tier",
                  tier: chain[index + 1]!.name,
                  index: index + 1,
                  atMs: parsed.epochMs - startEpochMs,
                  arrivalsPerSec,
                });
              }),
            ),
          );
        }
        // The live view's server is the edge: the server the users call.
        if (index > 0) return;
        unfollow.push(
          follow(incarnation, (text, line) =>
            live(() =>
              onRecord({ kind: "server", sample: serverSample(parseServerLine(text, { file: SERVER_OUTPUT, line }), startEpochMs) }),
            ),
          ),
        );
      },
    );
  });
  const server = servers[0]!;
  let client: ChildProgram | undefined;
  /** The spikes' extra clients, by fault; each stopped by its own pid at its fault's end. */
  const spikeByFault = new Map<number, ChildProgram>();
  const spikes = () => [...spikeByFault.values()];
  const spikesStopped = new Set<ChildProgram>();
  const stopping: Promise<unknown>[] = [];
  const abandon = () => {
    for (const tier of servers) tier.kill();
    client?.kill();
    for (const spike of spikes()) spike.kill();
  };
  options.signal.addEventListener("abort", abandon, { once: true });
  try {
    // The bottom first: each middle tier is started with the address of the one below it.
    for (const tier of [...servers].reverse()) await tier.start();
    const port = server.listeningPort;
    const clientLaunch = options.launcher("client");
    const startClient = (extraArgs: readonly string[]) =>
      new ChildProgram("client", clientLaunch.command, [
        ...clientLaunch.args,
        ...["-url", `http://127.0.0.1:${port}/api`, "-json"],
        // Enough threads for a large herd, so that a verdict is never the client's own lag; the user's -workers wins.
        ...["-workers", "auto"],
        ...plan.strategy.clientArgs,
        ...plan.clientArgs,
        ...extraArgs,
      ]);
    const clientStarted = startClient([]);
    client = clientStarted;
    if (onRecord !== undefined) {
      unfollow.push(
        follow(clientStarted, (text, line) =>
          live(() => {
            const parsed = parseClientLine(text, { file: CLIENT_OUTPUT, line });
            if (parsed.kind !== "window") return;
            const window = clientWindow(parsed, startEpochMs);
            onRecord({ kind: "client", window: { ...window, throttledPerSec: parsed.throttledPerSec } });
            // The users' attempts are the arrivals at the edge.
            if (isChain)
              onRecord({ kind: "tier", tier: chain[0]!.name, index: 0, atMs: window.endMs, arrivalsPerSec: parsed.attemptsPerSec });
          }),
        ),
      );
    }
    await clientStarted.waitForLine(/^client: /, { stream: "stderr", timeoutMs: 30_000 }).catch(notStarted);
    options.onStarted({
      server: server.program!.pid,
      client: clientStarted.pid,
      ...(isChain ? { tiers: servers.map((tier, index) => ({ name: chain[index]!.name, pid: tier.program!.pid })) } : {}),
    });

    const tell = (message: string) => options.onFault?.(message);
    const runStartMs = Date.now() - startEpochMs;
    const faults = schedule.map((fault) => ({ ...fault, atMs: runStartMs + fault.atMs }));
    // A spike's client is started now and waits for its fault's start (-start-at): a Node
    // process takes a second or more to start on a busy machine, which would cut the spike short.
    faults.forEach((fault, index) => {
      if (!playedAs(fault, "load")) return;
      const spike = startClient([...spikeArgs(plan, fault, index), "-start-at", String(startEpochMs + fault.atMs)]);
      spikeByFault.set(index, spike);
      if (onRecord !== undefined)
        unfollow.push(
          follow(spike, (text, line) =>
            live(() => {
              const parsed = parseClientLine(text, { file: SPIKE_OUTPUT, line });
              if (parsed.kind === "window") onRecord({ kind: "spike-client", window: clientWindow(parsed, startEpochMs) });
            }),
          ),
        );
      tell(`${fault.kind}: extra client pid ${spike.pid} started, waiting for ${formatFault(schedule[index]!, formatDuration)}`);
    });
    const firstStartMs = Math.min(...faults.map((fault) => fault.atMs));
    const lastEndMs = Math.max(...faults.map((fault) => fault.atMs + fault.durationMs));
    const phases: Phases = {
      stopAtMs: firstStartMs,
      resumeAtMs: lastEndMs,
      endMs: lastEndMs + plan.observeMs,
      ...(onlyOneStop ? {} : { faults, runStartMs }),
    };
    const report = (phase: Phase, phaseEndsAtMs: number) =>
      options.onProgress({
        strategy: plan.strategy.name,
        phase,
        phaseLeftMs: Math.max(0, startEpochMs + phaseEndsAtMs - Date.now()),
        client: readClientWindows(
          clientStarted.stdout.map((line) => line.text),
          startEpochMs,
          CLIENT_OUTPUT,
        ).at(-1),
        server: readServerSamples(server.stdoutLines(), startEpochMs, SERVER_OUTPUT).at(-1),
      });

    // What runs at each fault's start and end, in time order (an end before a start at the same instant).
    const active: Fault[] = [];
    const actions = faults.flatMap((fault, index) => {
      const endMs = fault.atMs + fault.durationMs;
      const tier = tierOf(fault);
      const struck = servers[tier]!;
      const onTierNow = () => active.filter((other) => tierOf(other) === tier);
      const setControlled = () => struck.setFaults(activeOf(onTierNow()));
      // order 0: an end, 1: a start, so that at the same instant one fault ends before the next begins.
      const at = (atMs: number, order: 0 | 1, run: () => Promise<void> | void) => ({ atMs, order, fault, run });
      switch (faultKind(fault.kind).mechanism) {
        case "pause":
          return [
            at(fault.atMs, 1, () => {
              const program = struck.program;
              if (program !== undefined && !program.signal("SIGSTOP")) throw diedEarly(program);
              tell(`${fault.kind}: SIGSTOP to ${label(tier)} pid ${program?.pid ?? "(crashed)"}`);
            }),
            at(endMs, 0, () => {
              const program = struck.program;
              if (program !== undefined && !program.signal("SIGCONT")) throw diedEarly(program);
              tell(`${fault.kind} over: SIGCONT to ${label(tier)} pid ${program?.pid ?? "(crashed)"}`);
            }),
          ];
        case "restart":
          return [
            at(fault.atMs, 1, async () => {
              const pid = struck.program?.pid;
              await struck.crash();
              tell(
                `${fault.kind}: ${label(tier)} pid ${pid} and its group killed (SIGKILL); connections to port ${struck.listeningPort} are refused`,
              );
            }),
            at(endMs, 0, async () => {
              const program = await struck.start();
              tell(`${fault.kind} over: ${label(tier)} started again on port ${struck.listeningPort}, pid ${program.pid}`);
            }),
          ];
        case "load":
          return [
            at(fault.atMs, 1, () => {
              const spike = spikeByFault.get(index)!;
              tell(`${fault.kind}: extra client pid ${spike.pid} sending (${spikeArgs(plan, fault, index).slice(0, 2).join(" ")})`);
            }),
            at(endMs, 0, () => {
              const spike = spikeByFault.get(index)!;
              if (!spike.running) throw diedEarly(spike);
              spikesStopped.add(spike);
              stopping.push(spike.stop());
              tell(`${fault.kind} over: extra client pid ${spike.pid} stopped`);
            }),
          ];
        case "condition":
          return [
            at(fault.atMs, 1, () => {
              active.push(fault);
              setControlled();
              tell(
                `${fault.kind}: set through ${faultControlName(isChain ? chain[tier]!.name : undefined)}: ${formatActiveFaults(activeOf(onTierNow()))}`,
              );
            }),
            at(endMs, 0, () => {
              active.splice(active.indexOf(fault), 1);
              setControlled();
              tell(
                `${fault.kind} over: ${faultControlName(isChain ? chain[tier]!.name : undefined)} now has ${formatActiveFaults(activeOf(onTierNow()))}`,
              );
            }),
          ];
      }
    });
    actions.sort((a, b) => a.atMs - b.atMs || a.order - b.order);
    const running = () => [...servers.map((tier) => tier.program), clientStarted, ...spikes().filter((spike) => !spikesStopped.has(spike))];

    onRecord?.({ kind: "phase", phase: "steady", atMs: runStartMs });
    let phaseName: Phase = "steady";
    for (const [step, action] of actions.entries()) {
      await phase(phaseName, action.atMs);
      await action.run();
      if (action.order === 1 && !onlyOneStop) onRecord?.({ kind: "fault", fault: action.fault });
      if (step === 0) {
        phaseName = onlyOneStop ? "outage" : "faults";
        if (onlyOneStop) onRecord?.({ kind: "phase", phase: "outage", atMs: phases.stopAtMs });
      }
    }
    onRecord?.({ kind: "phase", phase: "observe", atMs: phases.resumeAtMs });
    await phase("observe", phases.endMs);
    report("stopping", phases.endMs);

    await Promise.all(stopping);
    for (const tier of servers) await tier.settled();
    await clientStarted.stop();
    // A chain's tiers finish the calls they hold for the users before they stop, so that each tier's counts are whole.
    if (isChain) await drained(servers, Date.now(), options.signal);
    for (const tier of servers) await tier.program?.stop();
    const programs = [...servers.flatMap((tier) => tier.incarnations), clientStarted, ...spikes()];
    await ensureGone(
      programs,
      servers.map((tier) => tier.listeningPort),
    );
    const serverOutput = server.stdoutLines();
    const clientOutput = clientStarted.stdout.map((line) => line.text);
    const spikeOutputs = spikes().map((spike) => spike.stdout.map((line) => line.text));
    const extraWindows = spikeOutputs.flatMap((output) => readClientWindows(output, startEpochMs, SPIKE_OUTPUT));
    return {
      strategy: plan.strategy.name,
      startEpochMs,
      phases,
      server: readServerSamples(serverOutput, startEpochMs, SERVER_OUTPUT),
      client: addExtraLoad(readClientWindows(clientOutput, startEpochMs, CLIENT_OUTPUT), extraWindows),
      serverLines: serverOutput.filter((line) => line.startsWith("{")),
      clientLines: clientOutput.filter((line) => line.startsWith("{")),
      spikeClientLines: spikeOutputs.map((output) => output.filter((line) => line.startsWith("{"))),
      serverPid: server.incarnations[0]!.pid,
      serverPids: server.incarnations.map((program) => program.pid),
      clientPid: clientStarted.pid,
      spikePids: spikes().map((spike) => spike.pid),
      runStartMs,
      tiers: servers.map((tier, index) => ({
        name: chain[index]!.name,
        incarnationLines: tier.incarnations.map((program) =>
          program.stdout.map((line) => line.text).filter((line) => line.startsWith("{")),
        ),
        pids: tier.incarnations.map((program) => program.pid),
      })),
    };

    /** Waits until `endsAtMs`, reporting progress, and fails if a program dies meanwhile. */
    async function phase(name: Phase, endsAtMs: number): Promise<void> {
      while (Date.now() < startEpochMs + endsAtMs) {
        if (options.signal.aborted) throw new Error("interrupted");
        if (brokenLine !== undefined) throw brokenLine;
        for (const tier of servers) if (tier.failure !== undefined) throw tier.failure;
        for (const program of running()) if (program !== undefined && !program.running) throw diedEarly(program);
        report(name, endsAtMs);
        await new Promise((wake) => setTimeout(wake, Math.min(250, startEpochMs + endsAtMs - Date.now())));
      }
    }
  } catch (error) {
    abandon();
    await Promise.all([
      ...servers.flatMap((tier) => tier.incarnations).map((program) => program.exited),
      client?.exited,
      ...spikes().map((spike) => spike.exited),
    ]);
    throw error;
  } finally {
    options.signal.removeEventListener("abort", abandon);
    for (const stop of unfollow) stop();
  }
}

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
