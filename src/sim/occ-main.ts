import { DEBUG_FLAG, type FlagSpec, parseFlags, type ProgramDescription } from "../cli/flags.ts";
import { formatDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import { OCC_WORKLOAD_FLAG } from "../cli/workload.ts";
import { formatOccJson } from "../contracts/occ-line-writer.ts";
import { averageOccTrials, type OccFigures } from "../model/occ/occ-average.ts";
import { textTable } from "../report/text-table.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { type BlogRun, blogPolicy, blogRunsHelp, parseBlogRuns } from "../strategies/blog-backoff.ts";
import { SIM_SEED_FLAG } from "./options.ts";
import { BLOG_BACKOFF_FLAGS, blogStrategiesFlag, NETWORK_DELAY_FLAGS } from "../strategies/occ-flags.ts";

/** The blog's figures sweep 10 to 190 clients in steps of 10. */
const BLOG_SWEEP = "10:190:10";
const MAX_OCC_CLIENTS = 100_000;

const OCC_SIM_FLAGS = [
  OCC_WORKLOAD_FLAG,
  {
    name: "clients",
    group: "system",
    kind: "integer",
    default: 100,
    min: 1,
    max: MAX_OCC_CLIENTS,
    placeholder: "n",
    description: "clients, each updating the row once",
  },
  {
    name: "sweep-clients",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "list",
    description: `client counts to sweep instead of -clients: a comma list, from:to:step, or 'blog' for the blog's ${BLOG_SWEEP}`,
    check: (text) => clientCountsProblem(text),
  },
  blogStrategiesFlag("strategies", "all", "the policies to compare"),
  ...BLOG_BACKOFF_FLAGS,
  ...NETWORK_DELAY_FLAGS,
  {
    name: "trials",
    group: "run",
    kind: "integer",
    default: 100,
    min: 1,
    max: 100_000,
    placeholder: "n",
    description: "independent runs averaged per figure (the blog's simulator averages 100)",
  },
  { ...SIM_SEED_FLAG, description: "random seed: run t uses seed + t; the same flags and seed give the same figures" },
  { name: "json", group: "output", kind: "boolean", default: false, description: "print one JSON line per strategy and client count" },
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

const OCC_SIM_PROGRAM: ProgramDescription<typeof OCC_SIM_FLAGS> = {
  name: "sim -workload occ",
  summary:
    'The AWS Architecture Blog\'s "Exponential Backoff And Jitter" (Marc Brooker, 2015) in virtual time: N clients each\n' +
    "read one versioned row and write it back against the version read; a write lands only if no other landed since\n" +
    "(else 412), and the client backs off and starts over. Figures: work (writes tried, the blog's calls; calls counts\n" +
    "reads too) and the time until every client's write landed, as in github.com/aws-samples/aws-arch-backoff-simulator.",
  flags: OCC_SIM_FLAGS,
  epilog: `The blog's policies, as strategies of the registry (with -base 5ms -cap 2s):\n${blogRunsHelp()}`,
};

/** `10,20,50`, `10:190:10` or `blog` as client counts; throws a UsageError. */
export function parseClientCounts(text: string): number[] {
  const range = /^(\d+):(\d+):(\d+)$/.exec(text === "blog" ? BLOG_SWEEP : text.trim());
  const counts =
    range === null
      ? text.split(",").map((part) => (/^\s*\d+\s*$/.test(part) ? Number(part) : Number.NaN))
      : countsBetween(Number(range[1]), Number(range[2]), Number(range[3]));
  if (counts.length === 0 || counts.some((count) => !Number.isInteger(count) || count < 1 || count > MAX_OCC_CLIENTS))
    throw new UsageError(
      `invalid value "${text}" for flag -sweep-clients: must be client counts from 1 to ${MAX_OCC_CLIENTS}: 10,50,100, 10:190:10 or blog`,
    );
  return counts;
}

function countsBetween(from: number, to: number, step: number): number[] {
  if (step < 1 || to < from) return [];
  return Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, index) => from + index * step);
}

function clientCountsProblem(text: string): string | undefined {
  try {
    parseClientCounts(text);
    return undefined;
  } catch (error) {
    if (error instanceof UsageError) return error.message.replace(/^.*: must/, "must");
    throw error;
  }
}

export interface OccSimFigures extends OccFigures {
  readonly strategy: string;
}

/** Every figure of a run of `./sim -workload occ`, by client count then strategy. */
export function simulateOcc(
  runs: readonly BlogRun[],
  clientCounts: readonly number[],
  settings: { baseMs: number; capMs: number; network: { meanMs: number; sdMs: number }; trials: number; seed: number },
): OccSimFigures[] {
  return clientCounts.flatMap((clients) =>
    runs.map((run) => ({
      strategy: run.name,
      ...averageOccTrials(
        { clients, policy: blogPolicy(run, settings.baseMs, settings.capMs), network: settings.network, seed: settings.seed },
        settings.trials,
      ),
    })),
  );
}

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

export function occSimMain(argv: readonly string[], io: ProgramIo): number {
  const parsed = parseFlags(OCC_SIM_PROGRAM, argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return 0;
  }
  const values = parsed.values;
  const runs = parseBlogRuns(values.strategies);
  const counts = values["sweep-clients"] === undefined ? [values.clients] : parseClientCounts(values["sweep-clients"]);
  const network = { meanMs: values["net-delay"], sdMs: values["net-delay-sd"] };
  io.stderr.write(
    `sim: workload occ: ${counts.join(", ")} clients; base ${formatDuration(values.base)}, cap ${formatDuration(values.cap)}; ` +
      `network |normal(${formatDuration(network.meanMs)}, ${formatDuration(network.sdMs)})| each way; ` +
      `${values.trials} runs per figure from seed ${values.seed}\n`,
  );
  const figures = simulateOcc(runs, counts, { baseMs: values.base, capMs: values.cap, network, trials: values.trials, seed: values.seed });
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
