/**
 * Records docs/stability-sim.json: Stability Sim's own engine (github.com/marcbrooker/stability-sim,
 * not part of this project: clone it and give the path) run headless on its built-in examples
 * that examples/08 to 11 reproduce, with the figures `npm run validate` prints for ours. Its
 * engine is plain TypeScript (src/engine, no browser API outside its web worker's message
 * loop), so this builds the components and steps the engine as its worker does
 * (src/engine/worker.ts, handleStart), reading the examples from its own src/examples/index.ts.
 *
 *   node --import ./src/register-tsx.mjs scripts/stability-sim-record.ts -checkout PATH [-out docs/stability-sim.json]
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { provenance } from "../src/runtime/provenance.ts";

const ROOT = resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const checkout = option("-checkout");
if (checkout === undefined) {
  process.stderr.write("stability-sim-record: -checkout PATH (a clone of github.com/marcbrooker/stability-sim) is required\n");
  process.exit(2);
}
const out = resolve(ROOT, option("-out") ?? "docs/stability-sim.json");

/** What this script reads of Stability Sim's types (its own are not part of this project). */
interface Component {
  readonly id: string;
  readonly type: string;
  getMetrics(): Record<string, number>;
  generateInitialEvents?(context: unknown): unknown[];
}
interface ComponentDefinition {
  readonly id: string;
  readonly type: string;
  readonly config: { readonly type: string } & Record<string, unknown>;
}
interface Example {
  readonly id: string;
  readonly architecture: { components: ComponentDefinition[]; readonly connections: { sourceId: string; targetId: string }[] };
  readonly simulationConfig: { readonly endTime: number; readonly seed: number; readonly failureScenarios: unknown[] };
}
interface Engine {
  readonly currentTime: number;
  step(): boolean;
  peekNextEvent(): { timestamp: number } | null;
  scheduleEvent(event: unknown): void;
  nextId(): string;
  getRng(): { random(): number };
  getMetrics(): { record(id: string, name: string, value: number, time: number): void };
  setFailureInjector(injector: unknown): void;
}

const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(resolve(checkout, path)).href)) as T;
const { EXAMPLES } = await load<{ EXAMPLES: Example[] }>("src/examples/index.ts");
const { SimulationEngine } = await load<{ SimulationEngine: new (c: Component[], k: unknown[], s: unknown) => Engine }>(
  "src/engine/simulation-engine.ts",
);
const { FailureInjector } = await load<{
  FailureInjector: new () => { scheduleFailures(f: unknown[], s: (e: unknown) => void, id: () => string): void };
}>("src/engine/failure-injector.ts");
type Constructor = new (id: string, config: Record<string, unknown>) => Component;
const constructors: Record<string, Constructor> = {
  client: (await load<{ Client: Constructor }>("src/engine/components/client.ts")).Client,
  server: (await load<{ Server: Constructor }>("src/engine/components/server.ts")).Server,
  queue: (await load<{ Queue: Constructor }>("src/engine/components/queue.ts")).Queue,
  "load-balancer": (await load<{ LoadBalancer: Constructor }>("src/engine/components/load-balancer.ts")).LoadBalancer,
};

/** Per second of simulated time: every component's metrics at the end of that second. */
type Samples = Record<string, Record<string, number>>[];

/** Runs an example as its worker's handleStart does, with `change` applied to a copy; samples every component each second. */
function run(id: string, change: (example: Example) => void = () => {}): { seed: number; samples: Samples } {
  const example = structuredClone(EXAMPLES.find((candidate) => candidate.id === id)!);
  change(example);
  const { architecture, simulationConfig } = example;
  const components = architecture.components.map((definition) => {
    const { type, ...config } = definition.config;
    return new constructors[type]!(definition.id, config);
  });
  const engine = new SimulationEngine(components, architecture.connections, simulationConfig);
  const injector = new FailureInjector();
  engine.setFailureInjector(injector);
  injector.scheduleFailures(
    simulationConfig.failureScenarios,
    (event) => engine.scheduleEvent(event),
    () => engine.nextId(),
  );
  const context = {
    currentTime: 0,
    scheduleEvent: (event: unknown) => engine.scheduleEvent(event),
    getComponent: (componentId: string) => components.find((component) => component.id === componentId)!,
    getDownstream: (componentId: string) => architecture.connections.filter((c) => c.sourceId === componentId).map((c) => c.targetId),
    random: () => engine.getRng().random(),
    nextId: () => engine.nextId(),
    recordMetric: (componentId: string, name: string, value: number, time: number) =>
      engine.getMetrics().record(componentId, name, value, time),
  };
  for (const component of components) for (const event of component.generateInitialEvents?.(context) ?? []) engine.scheduleEvent(event);
  const samples: Samples = [];
  for (let second = 1; second <= simulationConfig.endTime; second++) {
    for (let next = engine.peekNextEvent(); next !== null && next.timestamp <= second; next = engine.peekNextEvent()) {
      if (engine.step()) break;
    }
    samples.push(Object.fromEntries(components.map((component) => [component.id, { ...component.getMetrics() }])));
  }
  return { seed: simulationConfig.seed, samples };
}

/** A cumulative counter's rate per second over seconds (from, to]. */
const rate = (samples: Samples, component: string, counter: string, from: number, to = samples.length) =>
  (samples[to - 1]![component]![counter]! - (from === 0 ? 0 : samples[from - 1]![component]![counter]!)) / (to - from);
/** The counter's increase in each second. */
const perSecond = (samples: Samples, component: string, counter: string) =>
  samples.map((sample, index) => sample[component]![counter]! - (index === 0 ? 0 : samples[index - 1]![component]![counter]!));
const round = (value: number) => Math.round(value * 10_000) / 10_000;
/** Steady rates below the GC example's 80/s, to find where each engine holds without the burst (ours holds at 10/s and 15/s). */
const GC_RATES = [10, 15, 20, 30, 40];

const retryStorm = run("metastable-retry");
const retryStormNone = run("metastable-retry", (example) => {
  example.architecture.components[0]!.config.retryStrategy = { type: "none" };
});
const cascade = run("timeout-cascade");
const cascadeTimeouts = perSecond(cascade.samples, "client-1", "timedOutCount");
/** Of the requests that ended in the run, the share that timed out. */
const timedOutShare = (samples: Samples) => {
  const client = samples.at(-1)!["client-1"]!;
  return round(client.timedOutCount! / (client.completedCount! + client.timedOutCount!));
};
/** Seeds besides the example's, for the spread of a minute at full utilisation: a random walk's, so wide that a mean takes 50 runs. */
const CASCADE_SEEDS = Array.from({ length: 49 }, (_, index) => index + 1);
/** The timeout cascade at a lower steady rate (90 % busy instead of 100 %), one seed: the trigger below its threshold. */
const cascadeAt = (arrivalRate: number, seed: number) =>
  run("timeout-cascade", (example) => {
    example.architecture.components[0]!.config.trafficPattern = { type: "open-loop", meanArrivalRate: arrivalRate };
    Object.assign(example.simulationConfig, { seed });
  }).samples;
const gc = run("gc-death-spiral");
const gcNoBurst = run("gc-death-spiral", (example) => {
  example.architecture.components = example.architecture.components.filter((component) => component.id !== "client-2");
});
const gcNoRetries = run("gc-death-spiral", (example) => {
  example.architecture.components[0]!.config.retryStrategy = { type: "none" };
});
/** The GC example at a lower steady rate, with and without its burst: OK/s from 30 s on, per rate. */
const gcAtRate = (steadyRate: number, burst: boolean) =>
  round(
    rate(
      run("gc-death-spiral", (example) => {
        const steady = example.architecture.components[0]!.config;
        steady.trafficPattern = { type: "open-loop", meanArrivalRate: steadyRate };
        if (!burst) example.architecture.components = example.architecture.components.filter((component) => component.id !== "client-2");
      }).samples,
      "client-1",
      "completedCount",
      30,
    ),
  );
const goodput = run("goodput-collapse");
/** The goodput example's first second after the spike in which half the offered 90/s got an answer in time; null: none in the run. */
const firstHealthySecond = (samples: Samples) => {
  const ok = perSecond(samples, "client-1", "completedCount");
  const second = ok.findIndex((count, index) => index >= 16 && count >= 45);
  return second < 0 ? null : second + 1;
};
/** Seeds besides the example's, for the spread of the backlog's drain. */
const GOODPUT_SEEDS = Array.from({ length: 9 }, (_, index) => index + 1);
/** The goodput example run for `seconds` instead of its 60, so that the end of the drain shows where it comes after 60 s. */
const goodputFor = (seconds: number, seed?: number) =>
  run("goodput-collapse", (example) => Object.assign(example.simulationConfig, { endTime: seconds }, seed === undefined ? {} : { seed }))
    .samples;
/** The goodput example without its latency spike: the trigger removed. */
const goodputNoSpike = run("goodput-collapse", (example) => Object.assign(example.simulationConfig, { failureScenarios: [] }));

const figures = {
  "metastable-retry": {
    seed: retryStorm.seed,
    okPerSecAfter30s: round(rate(retryStorm.samples, "client-1", "completedCount", 30)),
    noRetriesOkPerSecAfter30s: round(rate(retryStormNone.samples, "client-1", "completedCount", 30)),
  },
  "timeout-cascade": {
    seed: cascade.seed,
    seconds: cascade.samples.length,
    windowsWithTimeoutsShare: round(cascadeTimeouts.filter((count) => count > 0).length / cascadeTimeouts.length),
    timedOutShare: timedOutShare(cascade.samples),
    otherSeeds: CASCADE_SEEDS.map((seed) => ({
      seed,
      timedOutShare: timedOutShare(run("timeout-cascade", (example) => Object.assign(example.simulationConfig, { seed })).samples),
    })),
    at90PerSec: CASCADE_SEEDS.slice(0, 10).map((seed) => ({ seed, timedOutShare: timedOutShare(cascadeAt(90, seed)) })),
  },
  "gc-death-spiral": {
    seed: gc.seed,
    okPerSecAfter30s: round(rate(gc.samples, "client-1", "completedCount", 30)),
    noBurstOkPerSecAfter30s: round(rate(gcNoBurst.samples, "client-1", "completedCount", 30)),
    noRetriesOkPerSecAfter30s: round(rate(gcNoRetries.samples, "client-1", "completedCount", 30)),
    serverActiveAt30s: gc.samples[29]!["srv-1"]!.activeCount!,
    okPerSecFirst3s: perSecond(gc.samples, "client-1", "completedCount").slice(0, 3),
    byRate: GC_RATES.map((steady) => ({ rate: steady, okPerSecAfter30s: gcAtRate(steady, false), withBurst: gcAtRate(steady, true) })),
  },
  "goodput-collapse": {
    seed: goodput.seed,
    okPerSecAfter20s: round(rate(goodput.samples, "client-1", "completedCount", 20)),
    servedPerSecAfter20s: round(rate(goodput.samples, "srv-1", "tpsProcessed", 20)),
    queueAt16s: goodput.samples[15]!["queue-1"]!.queueDepth!,
    queueAt60s: goodput.samples.at(-1)!["queue-1"]!.queueDepth!,
    firstSecondOkAfter16s: firstHealthySecond(goodput.samples),
    otherSeeds: GOODPUT_SEEDS.map((seed) => {
      const samples = run("goodput-collapse", (example) => Object.assign(example.simulationConfig, { seed })).samples;
      return { seed, queueAt16s: samples[15]!["queue-1"]!.queueDepth!, firstSecondOkAfter16s: firstHealthySecond(samples) };
    }),
    /** The first healthy second over a 120 s run, for the example's seed and GOODPUT_SEEDS in that order. */
    firstSecondOkAfter16sIn120s: [undefined, ...GOODPUT_SEEDS].map((seed) => firstHealthySecond(goodputFor(120, seed))),
    noSpikeOkPerSecAfter20s: round(rate(goodputNoSpike.samples, "client-1", "completedCount", 20)),
  },
};

const theirCommit = execFileSync("git", ["-C", checkout, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
const record = {
  provenance: provenance(),
  simulator: "github.com/marcbrooker/stability-sim, src/engine run headless under node (tsx), examples from src/examples/index.ts",
  simulatorCommit: theirCommit,
  command: "node --import ./src/register-tsx.mjs scripts/stability-sim-record.ts -checkout PATH",
  figures,
};
writeFileSync(out, `${JSON.stringify(record, null, 2)}\n`);
process.stderr.write(`stability-sim-record: wrote ${out}\n${JSON.stringify(figures, null, 2)}\n`);
