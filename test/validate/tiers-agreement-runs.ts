import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main as demoMain } from "../../src/demo/main.ts";
import { main as simMain } from "../../src/sim/main.ts";
import type { TierVerdict } from "../../src/model/tiers/tier-figures.ts";
import type { ChainReport } from "../../src/runner/chain-report.ts";
import { parseSummary } from "../../src/report/summary-file.ts";

/*
 * The real chain against the simulated one (docs/tiers.md, "The real chain against the simulated
 * one"): one scenario file per case, run by `npm run demo` (one real ./server per tier and the real
 * ./client, in this process's demo) and by ./sim's chain, both in this process. Shared by
 * test/validate/tiers-agreement.test.ts and scripts/tiers-agreement.ts (docs/tiers-agreement.json).
 *
 * Scaled down for two shared cores: 100 users thinking 1 s (~100 requests/s), a 2 s timeout; edge
 * (256 threads, 2 ms) and api (256 threads, 5 ms), with threads enough not to cap the storm; a db
 * of 3 threads at 10 ms (300/s, a third busy in normal times): every layer's retries (up to 27
 * attempts per user request at the db) then keep it past its capacity after a slowdown or a stop
 * above it, while a budget at each tier lets it recover (measured in ./sim, seed 1). The fault
 * from 4 s for 5 s, a 16 s run, 1 s windows. Compared per tier: the verdict and the peak load
 * (peak arrivals/s ÷ normal) within ±30 %, and the tier that collapsed first.
 */

export interface ChainPolicy {
  readonly name: string;
  readonly description: string;
  /** The users' strategy: and each middle tier's upstream:, as YAML flow mappings. */
  readonly users: string;
  readonly edge: string;
  readonly api: string;
}

export const POLICIES: readonly ChainPolicy[] = [
  {
    name: "every-layer",
    description: "users, edge and api each retry fixed, 3 attempts (27 at the db at most)",
    users: "{strategy: fixed, max-attempts: 3}",
    edge: "{strategy: fixed, max-attempts: 3, timeout: 1s}",
    api: "{strategy: fixed, max-attempts: 3, timeout: 300ms}",
  },
  {
    name: "budget",
    description: "the same 3 attempts at every layer, each tier with gRPC's retry budget (budget: grpc)",
    users: "{strategy: fixed, max-attempts: 3}",
    edge: "{strategy: fixed, max-attempts: 3, timeout: 1s, budget: grpc}",
    api: "{strategy: fixed, max-attempts: 3, timeout: 300ms, budget: grpc}",
  },
];

/** The faults compared: a crash of the bottom, a middle tier stopped, the bottom ten times slower, a middle tier crashed. */
export const FAULTS: readonly string[] = ["db:crash@4s+5s", "api:stop@4s+5s", "db:slow@4s+5s*10", "api:crash@4s+5s"];

export interface AgreementCase {
  readonly policy: ChainPolicy;
  readonly fault: string;
}

/** Every fault with every policy, but the middle tier's crash with the policy that retries everywhere only (for the time). */
export const CASES: readonly AgreementCase[] = FAULTS.flatMap((fault) =>
  POLICIES.filter((policy) => fault !== "api:crash@4s+5s" || policy.name === "every-layer").map((policy) => ({ policy, fault })),
);

export const SEED = 1;
const RUN = "16s";
const INTERVAL = "1s";

/** The one scenario file both run. */
export function scenarioFile({ policy, fault }: AgreementCase): string {
  return `scenario: 1
name: "The real chain against the simulated one: ${policy.name}, ${fault}"
system: {clients: 100, lambda: 1, timeout: 2s}
strategy: ${policy.users}
tiers:
  - name: edge
    system: {model: queue, threads: 256, service-time: 2ms}
    upstream: ${policy.edge}
  - name: api
    system: {model: queue, threads: 256, service-time: 5ms}
    upstream: ${policy.api}
  - name: db
    system: {model: queue, threads: 3, service-time: 10ms}
faults: ["${fault}"]
run: {duration: ${RUN}}
`;
}

/** One tier's figures as compared. */
export interface TierPoint {
  readonly name: string;
  readonly verdict: TierVerdict;
  readonly peakLoad: number | null;
  readonly peakArrivalsPerSec: number;
  readonly normalArrivalsPerSec: number | null;
}

export interface ChainPoint {
  readonly tiers: readonly TierPoint[];
  readonly firstCollapsed: string | null;
  readonly firstCollapsedText: string;
}

export interface RealPoint extends ChainPoint {
  /** The demo's verdict of the edge, "invalid" where the client fell behind: then the case is not judged. */
  readonly demoVerdict: string;
  /** The tiers' seed (the demo draws it: a tier's system takes none; tier i runs with it + i) and the users'. */
  readonly seeds: { readonly server: number; readonly client: number };
}

export interface CaseResult {
  readonly policy: string;
  readonly fault: string;
  readonly real: RealPoint;
  readonly sim: ChainPoint;
  /** False where the real client fell behind: nothing about the chain can be read from it, agreement or not. */
  readonly judged: boolean;
  readonly sameVerdicts: boolean;
  readonly sameFirstCollapsed: boolean;
  /** Simulated ÷ real peak load, per tier (null where either has no normal). */
  readonly peakRatios: readonly (number | null)[];
  readonly agrees: boolean;
}

export const PEAK_TOLERANCE = 0.3;

const tierPoints = (tiers: ChainReport["tiers"]): TierPoint[] =>
  tiers.map(({ name, verdict, peakLoad, peakArrivalsPerSec, normalArrivalsPerSec }) => ({
    name,
    verdict,
    peakLoad,
    peakArrivalsPerSec,
    normalArrivalsPerSec,
  }));

const capture = () => {
  let text = "";
  return { stream: { write: (chunk: string) => (text += chunk) }, text: () => text };
};

/** Runs one case, the simulator first (a second of CPU), then the real chain. */
export async function runCase(agreementCase: AgreementCase): Promise<CaseResult> {
  const dir = mkdtempSync(join(tmpdir(), "thundering-herd-tiers-agreement-"));
  try {
    const file = join(dir, "chain.yaml");
    writeFileSync(file, scenarioFile(agreementCase));
    const sim = await simulated(file);
    const real = await measured(file, dir);
    return compare(agreementCase, real, sim);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * runCase, once more where the real client fell behind (a case not judged); the result of the
 * second run whatever it is, so that the caller can require the case judged.
 */
export async function runCaseJudged(agreementCase: AgreementCase): Promise<CaseResult> {
  const first = await runCase(agreementCase);
  return first.judged ? first : await runCase(agreementCase);
}

async function simulated(file: string): Promise<ChainPoint> {
  const [out, err] = [capture(), capture()];
  const code = await simMain([file, "-seed", String(SEED), "-interval", INTERVAL, "-json"], {
    stdout: out.stream,
    stderr: err.stream,
    env: {},
  });
  if (code !== 0) throw new Error(`./sim ${file} exited ${code}: ${err.text()}`);
  const report = JSON.parse(out.text()) as ChainReport;
  const text = capture();
  await simMain([file, "-seed", String(SEED), "-interval", INTERVAL], { stdout: text.stream, stderr: capture().stream, env: {} });
  return {
    tiers: tierPoints(report.tiers),
    firstCollapsed: report.firstCollapsed,
    firstCollapsedText: /^(first to collapse|no tier collapsed).*$/m.exec(text.text())?.[0] ?? "",
  };
}

async function measured(file: string, dir: string): Promise<RealPoint> {
  const [out, err] = [capture(), capture()];
  const args = [file, "-client-args", `-seed ${SEED} -interval ${INTERVAL}`, "-out", join(dir, "results")];
  const code = await demoMain(args, { stdout: out.stream, stderr: err.stream, env: {} });
  if (code !== 0) throw new Error(`npm run demo ${file} exited ${code}: ${err.text()}`);
  const report = /^report: (.*)\/report\.html$/m.exec(out.text());
  if (report === null) throw new Error(`npm run demo ${file} printed no report: ${out.text()}`);
  const summary = parseSummary(readFileSync(join(report[1]!, "summary.json"), "utf8"));
  const [result] = summary.results;
  return {
    demoVerdict: result!.metrics.verdict,
    seeds: summary.settings.seeds as RealPoint["seeds"],
    tiers: tierPoints(result!.tiers!),
    firstCollapsed: result!.firstCollapsed ?? null,
    firstCollapsedText: result!.firstCollapsedText ?? "",
  };
}

/** The comparison of one case: the same verdict at every tier, the same first collapse, and each tier's peak load within ±30 %. */
export function compare({ policy, fault }: AgreementCase, real: RealPoint, sim: ChainPoint): CaseResult {
  const judged = real.demoVerdict !== "invalid";
  const sameVerdicts = real.tiers.every((tier, index) => tier.verdict === sim.tiers[index]?.verdict);
  const sameFirstCollapsed = real.firstCollapsed === sim.firstCollapsed;
  const peakRatios = real.tiers.map((tier, index) => {
    const simulatedPeak = sim.tiers[index]?.peakLoad ?? null;
    return tier.peakLoad === null || simulatedPeak === null ? null : simulatedPeak / tier.peakLoad;
  });
  const peaksAgree = peakRatios.every((ratio) => ratio !== null && Math.abs(ratio - 1) <= PEAK_TOLERANCE);
  return {
    policy: policy.name,
    fault,
    real,
    sim,
    judged,
    sameVerdicts,
    sameFirstCollapsed,
    peakRatios,
    agrees: judged && sameVerdicts && sameFirstCollapsed && peaksAgree,
  };
}

/** The table of docs/tiers.md: one row per case and tier. */
export function agreementTable(results: readonly CaseResult[]): string {
  const fixed = (value: number | null) => (value === null ? "-" : `${value.toFixed(2)}x`);
  const lines = [
    "| policy | fault | tier | verdict: real | sim | peak load: real | sim | sim ÷ real | first to collapse: real | sim |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const result of results) {
    result.real.tiers.forEach((tier, index) => {
      const sim = result.sim.tiers[index]!;
      const caseCells = index === 0 ? [result.policy, `\`${result.fault}\``] : ["", ""];
      const firstCells = index === 0 ? [result.real.firstCollapsed ?? "none", result.sim.firstCollapsed ?? "none"] : ["", ""];
      const ratio = result.peakRatios[index];
      lines.push(
        `| ${[...caseCells, tier.name, tier.verdict, sim.verdict, fixed(tier.peakLoad), fixed(sim.peakLoad), ratio == null ? "-" : ratio.toFixed(2), ...firstCells].join(" | ")} |`,
      );
    });
    if (!result.judged)
      lines.push(`| | | not judged: the real client fell behind (demo verdict ${result.real.demoVerdict}) | | | | | | | |`);
  }
  return lines.join("\n");
}
