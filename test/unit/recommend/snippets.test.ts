import { validateServiceConfig } from "@grpc/grpc-js/build/src/service-config.js";
import { RETRY_MODES } from "@smithy/util-retry";
import { resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { GRPC_MAX_ATTEMPTS, type RetryIntent, type Snippet, SNIPPET_RENDERERS, snippetsFor } from "../../../src/recommend/snippets.ts";
import { STRATEGY_NAMES } from "../../../src/strategies/registry.ts";
import { envoySchemaErrors, envoyType } from "../../helpers/envoy-schema.ts";
import { snippetById, winnerIntent } from "../../helpers/snippets.ts";

const REPO_ROOT = resolve(import.meta.dirname, "../../..");

const intent = winnerIntent;

/** Every strategy, capped or not, with and without a budget; and mechanisms the simulator may add, as data. */
const WINNERS: RetryIntent[] = [
  ...STRATEGY_NAMES.flatMap((strategy) => [
    intent({ strategy }),
    intent({ strategy, "max-attempts": "1" }),
    intent({ strategy, "max-attempts": "3" }),
    intent({ strategy, "max-attempts": "8", "retry-budget": "true", "budget-tokens": "20", "budget-ratio": "0.05" }),
  ]),
  intent({ strategy: "fixed", "simple-backoff-delay": "0s" }),
  intent(
    { strategy: "full-jitter" },
    { client: { strategy: "full-jitter", budget: "envoy", "budget-percent": "35", "budget-min-concurrency": "5" } },
  ),
  intent(
    { strategy: "full-jitter" },
    { client: { strategy: "full-jitter", budget: "grpc", "budget-tokens": "50", "budget-ratio": "0.25" } },
  ),
  intent({ strategy: "full-jitter" }, { client: { strategy: "full-jitter", breaker: "sampling", "breaker-threshold": "0.3" } }),
  intent({ strategy: "grpc" }, { client: { strategy: "grpc", breaker: "consecutive" }, server: { "cancel-on-disconnect": "true" } }),
  intent({ strategy: "exponential" }, { client: { strategy: "exponential", throttle: "sre" } }),
];

const byId = snippetById;

/**
 * grpc-js's own validation of a service config (the one its channel applies): it throws on a bad
 * value and keeps only the fields it knows, so a misspelled field fails the equality. A6's cap of
 * 5 attempts, which grpc-js applies at run time rather than refusing, is checked beside it.
 */
function checkGrpc(config: Record<string, unknown>): void {
  expect(validateServiceConfig(config)).toEqual({ loadBalancingConfig: [], ...config });
  for (const method of config.methodConfig as { retryPolicy?: { maxAttempts: number }; hedgingPolicy?: { maxAttempts: number } }[]) {
    expect((method.retryPolicy ?? method.hedgingPolicy)?.maxAttempts ?? GRPC_MAX_ATTEMPTS).toBeLessThanOrEqual(GRPC_MAX_ATTEMPTS);
  }
}

const seconds = (duration: string) => Number.parseFloat(duration);

/**
 * The two YAML documents against Envoy's own API (route configuration, cluster: helpers/envoy-schema.ts),
 * then what the schema leaves to Envoy's code: the route names the cluster, and
 * max_interval is not below base_interval (the RetryBackOff comment's rule).
 */
function checkEnvoy(text: string): { route: Record<string, unknown>; cluster: Record<string, unknown> } {
  const documents = parseAllDocuments(text);
  expect(Array.isArray(documents)).toBe(true);
  const parsed = (documents as { errors: unknown[]; toJS(): unknown }[]).map((document) => {
    expect(document.errors).toEqual([]);
    return document.toJS() as Record<string, unknown>;
  });
  expect(parsed).toHaveLength(2);
  const [routeConfig, cluster] = parsed as [Record<string, unknown>, Record<string, unknown>];
  expect(envoySchemaErrors(envoyType("envoy.config.route.v3.RouteConfiguration"), routeConfig), text).toEqual([]);
  expect(envoySchemaErrors(envoyType("envoy.config.cluster.v3.Cluster"), cluster), text).toEqual([]);
  const host = (routeConfig.virtual_hosts as Record<string, unknown>[])[0]!;
  const route = ((host.routes as Record<string, unknown>[])[0]!.route as Record<string, unknown>)!;
  expect(route.cluster).toBe(cluster.name);
  const backOff = (route.retry_policy as { retry_back_off?: { base_interval: string; max_interval: string } } | undefined)?.retry_back_off;
  if (backOff !== undefined) expect(seconds(backOff.max_interval)).toBeGreaterThanOrEqual(seconds(backOff.base_interval));
  return { route, cluster };
}

/** No syntax errors, by the TypeScript compiler. */
function syntaxErrors(snippet: Snippet): string[] {
  const output = ts.transpileModule(snippet.text, {
    fileName: snippet.file,
    reportDiagnostics: true,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  });
  return (output.diagnostics ?? []).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
}

/**
 * Type errors of each of our library's snippets, compiled against the library's sources: one
 * program for them all (the compiler reads its libraries once), each snippet a module of its own.
 */
function libraryTypeErrors(texts: readonly string[]): string[][] {
  const files = texts.map((_, index) => resolve(REPO_ROOT, `choose-snippet-${index}.ts`));
  const textOf = new Map(files.map((file, index) => [file, texts[index]!]));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
    types: [],
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    paths: { "thundering-herd/backoff": [resolve(REPO_ROOT, "src/backoff/index.ts")] },
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (name) => textOf.get(name) ?? readFile(name);
  host.fileExists = (name) => textOf.has(name) || ts.sys.fileExists(name);
  host.getSourceFile = (name, language) => {
    const text = textOf.get(name);
    return text === undefined ? getSourceFile(name, language) : ts.createSourceFile(name, text, language);
  };
  const program = ts.createProgram(files, options, host);
  const errors = (diagnostics: readonly ts.Diagnostic[]) =>
    diagnostics.map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
  // Errors outside the snippets (options, libraries) belong to every snippet.
  const global = errors([...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]);
  return files.map((file) => {
    const source = program.getSourceFile(file)!;
    return [...global, ...errors([...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)])];
  });
}

describe("the winner's settings for other systems", () => {
  it("come one per registered system, each renderer writing the snippet of its own id", () => {
    const ids = SNIPPET_RENDERERS.map((renderer) => renderer.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const renderer of SNIPPET_RENDERERS) expect(renderer.render(WINNERS[0]!).id).toBe(renderer.id);
  });

  it("are a gRPC service config that grpc-js's own validation accepts whole, for every kind of winner", () => {
    for (const winner of WINNERS) {
      const grpc = byId(snippetsFor(winner), "grpc");
      checkGrpc(JSON.parse(grpc.text) as Record<string, unknown>);
    }
  });

  it("give a winner that hedges gRPC's hedgingPolicy (A6) instead of a retryPolicy, and no retry settings", () => {
    const hedging = intent({ "hedge-delay": "50ms", "max-attempts": "3" }, { hedgeDelayMs: 50 });
    const snippets = snippetsFor(hedging);
    expect(snippets.map((snippet) => snippet.id)).toEqual(["grpc"]);
    const config = JSON.parse(snippets[0]!.text);
    expect(config.methodConfig[0].retryPolicy).toBeUndefined();
    expect(config.methodConfig[0].hedgingPolicy).toEqual({ maxAttempts: 3, hedgingDelay: "0.05s", nonFatalStatusCodes: ["UNAVAILABLE"] });
    checkGrpc(config as Record<string, unknown>);
    const many = JSON.parse(snippetsFor(intent({ "hedge-delay": "1s", "max-attempts": "8" }, { hedgeDelayMs: 1000 }))[0]!.text);
    expect(many.methodConfig[0].hedgingPolicy.maxAttempts).toBe(GRPC_MAX_ATTEMPTS);
    expect(many.retryThrottling).toBeUndefined();
  });

  it("give a winner that hedges beside gRPC's budget its retryThrottling too (A6 withholds hedges by it), and no note that it is left out", () => {
    const budgeted = intent({ "hedge-delay": "50ms", "max-attempts": "3", budget: "grpc", "budget-tokens": "20" }, { hedgeDelayMs: 50 });
    const [grpc] = snippetsFor(budgeted);
    const config = JSON.parse(grpc!.text);
    expect(config.retryThrottling).toEqual({ maxTokens: 20, tokenRatio: 0.1 });
    expect(config.methodConfig[0].hedgingPolicy.maxAttempts).toBe(3);
    expect(grpc!.notes.join("\n")).not.toMatch(/no equivalent of the simulated -budget/);
    checkGrpc(config as Record<string, unknown>);
  });

  it("map attempts and budgets onto gRPC as far as it can, and say where it cannot", () => {
    const capped = JSON.parse(byId(snippetsFor(intent({ strategy: "full-jitter", "max-attempts": "3" })), "grpc").text);
    expect(capped.methodConfig[0].retryPolicy).toEqual({
      maxAttempts: 3,
      // gRPC's waits are its backoffs x 0.8 to 1.2: full jitter's mean, half its ceilings.
      initialBackoff: "0.05s",
      maxBackoff: "150s",
      backoffMultiplier: 2,
      retryableStatusCodes: ["UNAVAILABLE"],
    });
    const unlimited = byId(snippetsFor(intent({ strategy: "full-jitter" })), "grpc");
    expect(JSON.parse(unlimited.text).methodConfig[0].retryPolicy.maxAttempts).toBe(GRPC_MAX_ATTEMPTS);
    expect(unlimited.notes.join("\n")).toMatch(/at most 5 attempts.*no limit/);
    const none = byId(snippetsFor(intent({ strategy: "fixed", "max-attempts": "1" })), "grpc");
    expect(JSON.parse(none.text).methodConfig[0].retryPolicy).toBeUndefined();
    expect(none.notes.join("\n")).toContain("does not retry");
    const budgeted = JSON.parse(
      byId(snippetsFor(intent({ strategy: "grpc", "retry-budget": "true", "budget-ratio": "0.05" })), "grpc").text,
    );
    expect(budgeted.retryThrottling).toEqual({ maxTokens: 10, tokenRatio: 0.05 });
  });

  it("are an Envoy route retry_policy and cluster retry_budget that Envoy's own API schema (its .proto files and their validation rules) accepts", () => {
    for (const winner of WINNERS) checkEnvoy(byId(snippetsFor(winner), "envoy").text);
    const { route, cluster } = checkEnvoy(byId(snippetsFor(WINNERS.find((winner) => winner.client.budget === "envoy")!), "envoy").text);
    expect(route.retry_policy).toMatchObject({
      num_retries: 9,
      per_try_timeout: "2s",
      retry_back_off: { base_interval: "0.1s", max_interval: "300s" },
    });
    expect(cluster.circuit_breakers).toEqual({
      thresholds: [{ priority: "DEFAULT", retry_budget: { budget_percent: { value: 35 }, min_retry_concurrency: 5 } }],
    });
  });

  it("are AWS SDK settings: a retry mode and a number of attempts", () => {
    for (const winner of WINNERS) {
      const settings = JSON.parse(byId(snippetsFor(winner), "aws").text) as Record<string, unknown>;
      expect(Object.keys(settings).sort()).toEqual(["maxAttempts", "retryMode"]);
      // The JavaScript SDK's own list of retry modes.
      expect(Object.values(RETRY_MODES)).toContain(settings.retryMode);
      expect(Number.isInteger(settings.maxAttempts)).toBe(true);
      expect(settings.maxAttempts).toBeGreaterThanOrEqual(1);
    }
    expect(JSON.parse(byId(snippetsFor(intent({ strategy: "full-jitter", "max-attempts": "3" })), "aws").text)).toEqual({
      retryMode: "standard",
      maxAttempts: 3,
    });
    expect(JSON.parse(byId(snippetsFor(WINNERS.at(-1)!), "aws").text).retryMode).toBe("adaptive");
  });

  it(
    "are TypeScript that the compiler parses without a syntax error: AWS SDK, cockatiel, p-retry and our library",
    { timeout: 60_000 },
    () => {
      for (const winner of WINNERS) {
        for (const snippet of snippetsFor(winner).filter((entry) => entry.language === "typescript")) {
          expect(syntaxErrors(snippet), `${snippet.file} for ${JSON.stringify(winner.client)}:\n${snippet.text}`).toEqual([]);
        }
      }
      const cockatiel = byId(snippetsFor(intent({ strategy: "full-jitter", "max-attempts": "3" })), "cockatiel").text;
      expect(cockatiel).toContain(
        "retry(handleAll, { maxAttempts: 2, backoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 300000, exponent: 2, generator: fullJitterGenerator }) })",
      );
      const breaker = byId(snippetsFor(WINNERS.find((winner) => winner.client.breaker === "sampling")!), "cockatiel").text;
      expect(breaker).toContain("new SamplingBreaker({ threshold: 0.3, duration: 10000 })");
      expect(breaker).toContain("wrap(retryPolicy, breakerPolicy)");
      const pRetry = byId(snippetsFor(intent({ strategy: "fixed", "max-attempts": "4" })), "p-retry").text;
      expect(pRetry).toMatch(/retries: 3,\s+factor: 1,\s+minTimeout: 100,\s+maxTimeout: 100,\s+randomize: false,/);
    },
  );

  // The TypeScript compiler is slow to start; the limit bounds a hung run and measures nothing.
  it("are code that type-checks against our library, exactly as simulated", { timeout: 60_000 }, () => {
    const snippets = [
      { strategy: "exponential-backoff" },
      { strategy: "table", "max-attempts": "3" },
      { strategy: "grpc", "retry-budget": "true" },
      { strategy: "full-jitter", "max-attempts": "5" },
    ].map((client) => byId(snippetsFor(intent(client)), "thundering-herd").text);
    const errors = libraryTypeErrors(snippets);
    snippets.forEach((text, index) => expect(errors[index], text).toEqual([]));
    expect(byId(snippetsFor(intent({ strategy: "full-jitter", "max-attempts": "5" })), "thundering-herd").text).toContain(
      "fullJitterPolicy({ baseMs: 100, capMs: 300000 })",
    );
  });

  it("say so where the simulated mechanism or the server half has no place in the system", () => {
    const withServer = WINNERS.find((winner) => Object.keys(winner.server).length > 0)!;
    for (const snippet of snippetsFor(withServer)) expect(snippet.notes.join("\n"), snippet.file).toContain("-cancel-on-disconnect");
    const throttled = snippetsFor(WINNERS.at(-1)!);
    expect(byId(throttled, "p-retry").notes.join("\n")).toContain("no equivalent of the simulated -throttle sre");
  });
});
