import { parseFlags } from "../cli/flags.ts";
import { formatDuration } from "../cli/duration.ts";
import { formatOccJson } from "../contracts/occ-line-writer.ts";
import { textTable } from "../report/text-table.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import type { BlogRun } from "../strategies/blog-backoff.ts";
import type { ScenarioMetadata } from "../scenario-file/format.ts";
import { OCC_SIM_PROGRAM, OCC_SIM_TARGET, occRun } from "../options/occ.ts";
import { type OccSimFigures, simulateOcc } from "../runner/occ.ts";

const round = (value: number) => String(Math.round(value));

/** A table per figure for a sweep (clients down, strategies across), or one table for one client count. */
export function occTables(figures: readonly OccSimFigures[], runs: readonly BlogRun[]): string {
  const counts = [...new Set(figures.map((figure) => figure.clients))];
  const at = (clients: number, strategy: string) => figures.find((figure) => figure.clients === clients && figure.strategy === strategy)!;
  if (counts.length === 1) {
    return textTable([
      ["strategy", "work (writes)", "calls (reads + writes)", "completion"],
      ...runs.map((run) => {
        const figure = at(counts[0]!, run.name);
        return [run.name, round(figure.writes), round(figure.calls), formatDuration(Math.round(figure.completionMs))];
      }),
    ]);
  }
  const table = (title: string, cell: (figure: OccSimFigures) => string) =>
    `${title}\n${textTable([["clients", ...runs.map((run) => run.name)], ...counts.map((clients) => [String(clients), ...runs.map((run) => cell(at(clients, run.name)))])])}`;
  return [
    table("work: writes tried (the blog's calls), mean per run", (figure) => round(figure.writes)),
    table("completion: time until every client's write landed, ms, mean per run", (figure) => round(figure.completionMs)),
  ].join("\n\n");
}

/** `./sim -workload occ`, its flags after a scenario file's (whose metadata -print-scenario keeps). */
export async function occSimMain(argv: readonly string[], io: ProgramIo, metadata?: ScenarioMetadata): Promise<number> {
  const parsed = parseFlags(OCC_SIM_PROGRAM, argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return 0;
  }
  const values = parsed.values;
  const run = occRun(values);
  const { runs, counts, settings } = run;
  if (values["print-scenario"]) {
    const { printScenario } = await import("../scenario-file/print.ts");
    io.stdout.write(await printScenario(OCC_SIM_TARGET, values, {}, metadata));
    return 0;
  }
  const { network } = settings;
  io.stderr.write(
    `sim: workload occ: ${counts.join(", ")} clients; base ${formatDuration(values.base)}, cap ${formatDuration(values.cap)}; ` +
      `network |normal(${formatDuration(network.meanMs)}, ${formatDuration(network.sdMs)})| each way; ` +
      `${values.trials} runs per figure from seed ${values.seed}\n`,
  );
  const figures = simulateOcc(run);
  if (values.json) {
    for (const figure of figures)
      io.stdout.write(
        `${formatOccJson({
          workload: "occ",
          source: "sim",
          strategy: figure.strategy,
          clients: figure.clients,
          trials: figure.trials,
          writes: figure.writes,
          calls: figure.calls,
          completionMs: figure.completionMs,
          landed: figure.landed,
          seed: values.seed,
        })}\n`,
      );
    return 0;
  }
  io.stdout.write(`${occTables(figures, runs)}\n`);
  return 0;
}
