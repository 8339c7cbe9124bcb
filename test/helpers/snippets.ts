import ts from "typescript";
import { vi } from "vitest";
import { nextDelay } from "../../src/backoff/delay.ts";
import { type Random, seededRandom } from "../../src/backoff/random.ts";
import { simValuesFor } from "../../src/recommend/settings.ts";
import { type RetryIntent, type Snippet, snippetsFor } from "../../src/recommend/snippets.ts";
import { simulationConfigFrom } from "../../src/config/simulation.ts";

/** The winner's intent as choose builds it: the simulator's own reading of the candidate's flags. */
export function winnerIntent(client: Record<string, string>, extra: Partial<RetryIntent> = {}): RetryIntent {
  const config = simulationConfigFrom(simValuesFor({}, client));
  return {
    id: "winner",
    policy: config.retry.backoff,
    maxAttempts: config.retry.maxAttempts,
    budget: config.retry.fleet?.budget?.kind === "grpc" ? config.retry.fleet.budget.budget : undefined,
    timeoutMs: config.timeoutMs,
    thinkTimeMeanMs: config.retry.thinkTimeMeanMs,
    client,
    server: {},
    ...extra,
  };
}

export const snippetById = (snippets: readonly Snippet[], id: Snippet["id"]): Snippet => snippets.find((snippet) => snippet.id === id)!;

export const snippetOf = (intent: RetryIntent, id: Snippet["id"]): Snippet => snippetById(snippetsFor(intent), id);

/**
 * Runs a TypeScript snippet as the reader would, with its imports bound to the real libraries
 * the test imported (`modules`, by specifier); returns its exports. An import of anything else fails.
 */
export function runSnippet(snippet: Snippet, modules: Readonly<Record<string, object>>): Record<string, unknown> {
  const outputText = javascriptOf(snippet);
  const load = (specifier: string) => {
    const found = modules[specifier];
    if (found === undefined) throw new Error(`${snippet.file} imports ${specifier}, which the test did not provide`);
    // An ES module's namespace as CommonJS sees a transpiled ES module: its default export stays `default`.
    return { __esModule: true, ...found };
  };
  const exports: Record<string, unknown> = {};
  new Function("require", "exports", outputText)(load, exports);
  return exports;
}

const transpiled = new Map<string, string>();

/** The snippet as CommonJS JavaScript, transpiled once per text (the compiler is the slow part of a run). */
function javascriptOf(snippet: Snippet): string {
  let javascript = transpiled.get(snippet.text);
  if (javascript === undefined) {
    javascript = ts.transpileModule(snippet.text, {
      fileName: snippet.file,
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, esModuleInterop: true },
    }).outputText;
    transpiled.set(snippet.text, javascript);
  }
  return javascript;
}

/** A draw that always returns the same quantile `u`: the policy's waits at that point of its jitter. */
export function quantileRandom(u: number): Random {
  return {
    uniform: () => u,
    uniformInt: (maxExclusive) => Math.floor(u * maxExclusive),
    exponential: (mean) => -mean * Math.log(1 - u),
    // The snippets' Box-Muller normal() with both of its Math.random() draws at u.
    normal: (mean, deviation) => mean + deviation * Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * u),
  };
}

/**
 * The simulated policy's waits before each of `retries` retries, every draw at quantile `u`
 * (src/backoff/delay.ts, the simulator's own function); shorter when the policy gives up first.
 */
export function policyWaits(intent: RetryIntent, retries: number, u: number): number[] {
  const random = quantileRandom(u);
  const waits: number[] = [];
  // The reference policy grows its first wait from the user's think time (src/model/client-loop.ts).
  let previous: number | undefined = intent.policy.kind === "reference" ? intent.thinkTimeMeanMs : undefined;
  for (let attempt = 1; attempt <= retries; attempt++) {
    const wait = nextDelay(intent.policy, attempt, previous, random);
    if (wait === undefined) break;
    waits.push(wait);
    previous = wait;
  }
  return waits;
}

/** The attempts a retry library made of an operation that always fails, and the waits between them. */
export interface ObservedRetries {
  readonly attempts: number;
  readonly waitsMs: readonly number[];
}

/**
 * Runs `retrying` (a library retrying the operation it is given) on fake timers, with every
 * Math.random() at `u`, against an operation that always fails: the waits are the fake clock's
 * steps between attempts, i.e. exactly what the library asked setTimeout for.
 */
export async function observeRetries(u: number, retrying: (operation: () => Promise<never>) => Promise<unknown>): Promise<ObservedRetries> {
  const realImmediate = setImmediate;
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  const random = vi.spyOn(Math, "random").mockReturnValue(u);
  try {
    const times: number[] = [];
    const operation = async (): Promise<never> => {
      times.push(Date.now());
      throw new Error("failed on purpose");
    };
    let settled = false;
    const run = retrying(operation).finally(() => (settled = true));
    run.catch(() => undefined);
    // Each step fires the timers due and lets the library's promise chain set the next one.
    for (let step = 0; !settled; step++) {
      if (step > 10_000) throw new Error("the retry library neither finished nor set a timer");
      await vi.runOnlyPendingTimersAsync();
      await new Promise((resolve) => realImmediate(resolve));
    }
    await expectRejection(run);
    return { attempts: times.length, waitsMs: times.slice(1).map((time, index) => time - times[index]!) };
  } finally {
    random.mockRestore();
    vi.useRealTimers();
  }
}

async function expectRejection(run: Promise<unknown>): Promise<void> {
  const outcome = await run.then(
    () => "resolved",
    () => "rejected",
  );
  if (outcome !== "rejected") throw new Error("an operation that always fails ended in a success");
}

/** The simulated policy's mean wait before retry number `attempt`, from seeded draws; and its standard error. */
export function meanWait(intent: RetryIntent, attempt: number): { meanMs: number; standardErrorMs: number } {
  const random = seededRandom(34);
  const previous = intent.policy.kind === "reference" ? intent.thinkTimeMeanMs : undefined;
  const draws = Array.from({ length: 20_000 }, () => nextDelay(intent.policy, attempt, previous, random)!);
  const meanMs = draws.reduce((sum, draw) => sum + draw, 0) / draws.length;
  const variance = draws.reduce((sum, draw) => sum + (draw - meanMs) ** 2, 0) / (draws.length - 1);
  return { meanMs, standardErrorMs: Math.sqrt(variance / draws.length) };
}

/**
 * The simulated policy's mean wait before each of the first `retries` retries, over seeded runs
 * of the whole sequence (each wait after its predecessor, as decorrelated jitter needs).
 */
export function meanWaitSequence(intent: RetryIntent, retries: number, runs = 20_000): number[] {
  const random = seededRandom(35);
  const sums = new Array<number>(retries).fill(0);
  for (let run = 0; run < runs; run++) {
    let previous = intent.policy.kind === "reference" ? intent.thinkTimeMeanMs : undefined;
    for (let attempt = 1; attempt <= retries; attempt++) {
      previous = nextDelay(intent.policy, attempt, previous, random)!;
      sums[attempt - 1]! += previous;
    }
  }
  return sums.map((sum) => sum / runs);
}
