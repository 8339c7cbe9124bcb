import { formatDuration } from "../cli/duration.ts";
import { buildGrid, type Measured, measurePlan, toConfig } from "../recommend/grid-measure.ts";
import { defaultLauncher, type Launcher } from "../runtime/launcher.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { serverLevers } from "../recommend/candidates.ts";
import { checkFaultTiers } from "../config/simulation.ts";
import { CHOOSE_FLAGS, CHOOSE_TARGET, type ChooseOptions, parseChooseArgs } from "../options/choose.ts";
import { blamingScenarioFile, withScenarioFile } from "../scenario-file/arguments.ts";
import { chooseChain } from "./chain.ts";
import { checkValidateAgainst, validateTop } from "./validate.ts";
import { measure } from "./measure-stage.ts";
import { rankOf, recommend } from "./recommend-stage.ts";
import { faultsListing, listing, renderFiles, renderText } from "./render-stage.ts";

/*
 * `thundering-herd choose`: ranks retry policies for the user's own system. Every candidate
 * (src/recommend/candidates.ts) is measured in the simulator with several seeds on every core:
 * success within the SLO, the retried requests' wait and amplification, each listed outage,
 * and the longest outage survived. The ranking rule, the Pareto front, a recommendation with its runner-up, and the
 * winner's settings for gRPC, Envoy, the AWS SDKs, cockatiel, p-retry and our own library.
 */

export interface ChooseDependencies {
  /** Starts ./server and ./client for -validate. */
  readonly launcher?: Launcher;
}

/** Stages: measure every candidate in the simulator, rank them, recommend the winner, render the answer (and -validate it). */
export async function main(argv: readonly string[], io: ProgramIo, dependencies: ChooseDependencies = {}): Promise<number> {
  const { argv: args, scenario } = await withScenarioFile(argv, CHOOSE_TARGET, io.stderr);
  const commandLine = args.slice(scenario?.tokens.length ?? 0);
  const parsed = await blamingScenarioFile(scenario, commandLine, CHOOSE_FLAGS, async () => {
    const parsed = parseChooseArgs(args);
    // One server has no tiers: a fault naming one is refused as ./sim refuses it, never run on the server.
    if (parsed.kind === "run" && scenario?.tiers === undefined) checkFaultTiers(parsed.options.schedules?.flat() ?? [], []);
    return parsed;
  });
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return 0;
  }
  const options = parsed.options;
  if (scenario?.tiers !== undefined) return chooseChain(options, scenario, io);
  const own = options.own;
  // The user's system is checked by the simulator's own rules before anything runs.
  const baseConfig = toConfig(options.system, {}, {});
  if (own["print-scenario"]) {
    const { printScenario } = await import("../scenario-file/print.ts");
    io.stdout.write(await printScenario(CHOOSE_TARGET, { ...options.system, ...own }, {}, scenario?.metadata));
    return 0;
  }
  const skipped: string[] = [];
  const grid = buildGrid(options, skipped);
  const plan = measurePlan(options);
  // Your service has none of ./server's levers: with -target, client policies only.
  const levers =
    own["client-only"] || options.target !== undefined
      ? []
      : serverLevers(baseConfig.latency, baseConfig.timeoutMs, baseConfig.model).slice(1);
  if (own.list) {
    io.stdout.write(
      listing(
        grid,
        skipped,
        levers.map((lever) => lever.id),
        options,
        plan,
      ),
    );
    return 0;
  }
  checkValidateAgainst(
    options,
    grid.map((entry) => entry.candidate.id),
  );
  // A service -validate cannot play is refused now, not after minutes of measuring.
  await options.target?.preflight();
  announce(options, grid, levers, io);

  const measured = await measure(options, plan, grid, levers, skipped, io);
  const ranked = rankOf(measured.summaries, options);
  const configs = new Map([...grid, ...measured.pairs].map((entry) => [entry.candidate.id, entry.config]));
  const advice = recommend(options, measured, ranked, configs);
  if (!own.json) renderText(options, ranked, advice, io);
  const validation = own.validate
    ? await validateTop(options, measured.summaries, ranked.ranked, configs, io, dependencies.launcher ?? defaultLauncher())
    : undefined;
  if (validation === "interrupted") return 130;

  await renderFiles(options, scenario, { measured, ranked, advice, validation, skipped }, io);
  return validation?.failure === undefined ? 0 : 1;
}

/** What choose is about to measure, on stderr. */
function announce(options: ChooseOptions, grid: readonly Measured[], levers: readonly { readonly id: string }[], io: ProgramIo): void {
  io.stderr.write(
    `choose: ${grid.length} candidates x ${options.seeds.length} seeds on ${options.parallel} worker threads; outages ${options.outagesMs.map((ms) => formatDuration(ms)).join(", ")}; ` +
      `SLO ${formatDuration(options.sloMs)}${levers.length > 0 ? `; then server levers ${levers.map((lever) => lever.id).join(", ")}` : ""}\n` +
      faultsListing(options)
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => `choose: ${line}\n`)
        .join(""),
  );
}
