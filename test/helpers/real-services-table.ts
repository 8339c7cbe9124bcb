import { sameRecoveryTime } from "../../src/choose/validate.ts";

/**
 * The tables of docs/real-services.md, from docs/real-services.json (scripts/real-services.ts):
 * per service, what the probe measured past saturation and what the scenario file says of it;
 * then per service, trouble and strategy, the crash experiment on the real service (demo -target)
 * beside the simulator's prediction on that scenario, and whether they agree.
 * test/unit/docs/real-services.test.ts holds the page to them.
 */

/** A run's figures as the file keeps them: a verdict, and the times from the trouble's end until the server and the clients were back. */
export interface RunFigures {
  readonly verdict: string;
  readonly serverBackMs: number | null;
  readonly clientsBackMs: number | null;
}

export interface RealServicesFile {
  readonly services: readonly {
    readonly name: string;
    readonly system: Readonly<Record<string, unknown>>;
    readonly measured: Readonly<Record<string, number | string>>;
    /** choose -validate -target on the service: its winner, and the validation (the order's line among it). */
    readonly choose?: {
      readonly winner: string;
      readonly validation: {
        readonly order?: { readonly holds?: boolean; readonly words: string };
        readonly rows: readonly {
          readonly id: string;
          readonly simulated: string;
          readonly measured: string;
          readonly simulatedClientRecoveryMs: number | null;
          readonly measuredClientRecoveryMs: number | null;
        }[];
      };
    };
    readonly experiments: readonly {
      readonly fault: string;
      readonly strategies: readonly {
        readonly strategy: string;
        readonly real: RunFigures;
        readonly predicted: RunFigures | { readonly why: string };
      }[];
    }[];
  }[];
}

/** The verdicts that judge a run; any other (invalid: the run started unsettled or its client fell behind; too-short) does not. */
const JUDGED = ["recovered", "recovering", "collapsed"];

/**
 * Whether the real run and the simulator's agree: the same verdict, and server back and clients
 * back each within a factor 1.5 or 10 s of each other (both never back agrees); the first
 * difference found, in words, when they do not; undefined, with why, when the real run was not
 * judged or there is no prediction: such a run neither agrees nor disagrees.
 */
export function agreement(
  real: RunFigures,
  predicted: RunFigures | { readonly why: string },
): { agrees: boolean | undefined; why: string } {
  if (!("verdict" in predicted)) return { agrees: undefined, why: `no prediction: ${predicted.why}` };
  if (!JUDGED.includes(real.verdict)) return { agrees: undefined, why: `the real run was not judged (${real.verdict})` };
  if (real.verdict !== predicted.verdict) return { agrees: false, why: `verdict ${real.verdict}, predicted ${predicted.verdict}` };
  for (const [what, a, b] of [
    ["server back", real.serverBackMs, predicted.serverBackMs],
    ["clients back", real.clientsBackMs, predicted.clientsBackMs],
  ] as const) {
    if (a === null && b === null) continue;
    const close = a !== null && b !== null && sameRecoveryTime(a, b);
    if (!close) return { agrees: false, why: `${what} ${seconds(a)}, predicted ${seconds(b)}` };
  }
  return { agrees: true, why: "" };
}

function seconds(ms: number | null): string {
  return ms === null ? "never" : `${(ms / 1000).toFixed(1)} s`;
}

/** A run in a cell: its verdict, then when the server and the clients were back. */
function figuresCell(figures: RunFigures | { readonly why: string }): string {
  if (!("verdict" in figures)) return "no prediction";
  return `${figures.verdict} (server ${seconds(figures.serverBackMs)}, clients ${seconds(figures.clientsBackMs)})`;
}

/** Whether a real run and its prediction agree, in a cell: "yes", "no: …" or "not judged: …". */
function agreeCell(real: RunFigures, predicted: RunFigures | { readonly why: string }): string {
  const { agrees, why } = agreement(real, predicted);
  return agrees === undefined ? `not judged: ${why}` : agrees ? "yes" : `no: ${why}`;
}

/** The flags past saturation a probe adds to a model's, as the file's system section has them. */
const PAST_SATURATION_FLAGS = ["max-concurrency", "queue-limit", "shed-with", "backlog", "cancel-on-disconnect"];

const FATES: readonly [string, string][] = [
  ["shed", "503"],
  ["connect-timeout", "connect timeout"],
  ["refused", "refused"],
  ["reset", "reset"],
];

const tableText = (header: readonly string[], rows: readonly (readonly string[])[]) => {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
};

/** The scenario's words for what the service does past saturation: its model and the flags the probe added. */
function scenarioCell(system: Readonly<Record<string, unknown>>): string {
  const flags = Object.entries(system)
    .filter(([name]) => PAST_SATURATION_FLAGS.includes(name))
    .map(([name, value]) => `${name}: ${value}`);
  return `${system.model}${flags.length === 0 ? "" : `, ${flags.join(", ")}`}`;
}

/** What the probe measured past saturation, and the scenario it wrote. */
export function realServicesTable(file: RealServicesFile): string {
  const rows = file.services.map((service) => {
    const { measured, system } = service;
    const excess = FATES.filter(([key]) => Number(measured[key] ?? 0) > 0)
      .sort((a, b) => Number(measured[b[0]]) - Number(measured[a[0]]))
      .map(([key, words]) => `${words} ${measured[key]}`);
    const held =
      measured["held-at-excess"] === undefined
        ? `all (${measured["held-at-most"]} at once)`
        : `${measured["held-at-excess"]}, then ${excess.join(", ")}`;
    const share = measured["work-for-nobody"];
    const nobody = share === undefined ? "can't tell" : `${Math.round(100 * Number(share))} %`;
    return [service.name, held, nobody, measured.recovery === "none" ? "not back" : String(measured.recovery), scenarioCell(system)];
  });
  return tableText(["service", "held, then the excess", "work for nobody", "back after", "scenario"], rows);
}

/** The crash experiment on each real service beside the simulator's prediction, row by row, and whether they agree. */
export function realAgainstPredictedTable(file: RealServicesFile): string {
  const rows = file.services.flatMap((service) =>
    service.experiments.flatMap((experiment) =>
      experiment.strategies.map((run) => {
        return [
          service.name,
          experiment.fault,
          run.strategy,
          figuresCell(run.real),
          figuresCell(run.predicted),
          agreeCell(run.real, run.predicted),
        ];
      }),
    ),
  );
  return tableText(["service", "trouble", "strategy", "real service (demo -target)", "simulator", "agree"], rows);
}

/** "3 of 4" runs agree, and how many were not judged, if any. */
function agreeCount(runs: readonly { readonly real: RunFigures; readonly predicted: RunFigures | { readonly why: string } }[]): string {
  const verdicts = runs.map((run) => agreement(run.real, run.predicted).agrees);
  const judged = verdicts.filter((agrees) => agrees !== undefined);
  const notJudged = verdicts.length - judged.length;
  return `${judged.filter(Boolean).length} of ${judged.length}${notJudged === 0 ? "" : ` (${notJudged} not judged)`}`;
}

/**
 * The README's table: per service, the scenario the probe wrote, the verdicts after the first
 * trouble (the stop) on the real service and in the simulator, how many of its runs agree, and
 * choose's order on the service where it was checked.
 */
export function realServicesReadmeTable(file: RealServicesFile): string {
  const first = file.services[0]?.experiments[0];
  const strategies = first?.strategies.map((run) => run.strategy).join(" / ") ?? "";
  const rows = file.services.map((service) => {
    const runs = service.experiments.flatMap((experiment) => experiment.strategies);
    const stop = service.experiments[0]!.strategies;
    const verdicts = (side: "real" | "predicted") =>
      stop.map((run) => ("verdict" in run[side] ? (run[side] as RunFigures).verdict : "none")).join(" / ");
    const order = service.choose?.validation.order;
    return [
      service.name,
      scenarioCell(service.system),
      verdicts("real"),
      verdicts("predicted"),
      agreeCount(runs),
      service.choose === undefined ? "not run" : `${service.choose.winner}: ${orderWords(order)}`,
    ];
  });
  return tableText(
    [
      "service",
      "the probe's scenario",
      `after ${first?.fault ?? "the stop"}, ${strategies}: real`,
      "simulator",
      "runs that agree",
      "choose's winner: its order against fixed on the service",
    ],
    rows,
  );
}

/** choose's order on the service in a few words: "holds", "holds, as a tie on this outage", "DOES NOT HOLD", "cannot tell". */
function orderWords(order: { readonly words: string } | undefined): string {
  return order === undefined ? "none" : order.words.replace(/^choose's order on your service: /, "").replace(/: (the winner|both) .*$/, "");
}

/** choose -validate -target on the services it ran on: each candidate's verdict on the service beside the simulator's, and the order. */
export function realServicesChooseTable(file: RealServicesFile): string {
  const rows = file.services.flatMap((service) => {
    const choose = service.choose;
    if (choose === undefined) return [];
    const cell = (id: string, side: "simulated" | "measured") => {
      const row = choose.validation.rows.find((each) => each.id === id);
      if (row === undefined) return "did not run";
      const back = side === "simulated" ? row.simulatedClientRecoveryMs : row.measuredClientRecoveryMs;
      return `${row[side]}${back === null ? "" : ` (clients ${seconds(back)})`}`;
    };
    const order = choose.validation.order;
    return [
      [
        service.name,
        choose.winner,
        cell(choose.winner, "measured"),
        cell(choose.winner, "simulated"),
        cell("fixed", "measured"),
        cell("fixed", "simulated"),
        orderWords(order),
      ],
    ];
  });
  return tableText(
    ["service", "choose's winner", "the winner on the service", "simulated", "fixed on the service", "simulated", "choose's order there"],
    rows,
  );
}

/** docs/real-services-repeat.json: the disagreements' cases, each run again with several seeds. */
export interface RepeatFile {
  readonly cases: readonly {
    readonly service: string;
    readonly fault: string;
    readonly runs: readonly {
      readonly seed: number;
      readonly strategies: readonly {
        readonly strategy: string;
        readonly real: RunFigures;
        readonly predicted: RunFigures | { readonly why: string };
        readonly watcher: readonly {
          readonly fromS: number;
          readonly answers: number;
          readonly atBaseline: number;
          readonly latencyP50Ms: number | null;
        }[];
      }[];
    }[];
  }[];
}

/**
 * The repeats in a table: per case, strategy and seed, the real run and the prediction, whether they
 * agree, and the watcher's answers at baseline per 10 s after the trouble (the evidence behind a
 * late "server back": a long stretch of slow answers, or one slow answer late in the minute).
 */
export function repeatTable(file: RepeatFile): string {
  const rows = file.cases.flatMap((each) =>
    each.runs.flatMap((run) =>
      run.strategies.map((strategy) => {
        return [
          `${each.service} ${each.fault}`,
          strategy.strategy,
          String(run.seed),
          figuresCell(strategy.real),
          figuresCell(strategy.predicted),
          agreeCell(strategy.real, strategy.predicted),
          strategy.watcher.map((block) => `${block.atBaseline}/${block.answers}`).join(" "),
        ];
      }),
    ),
  );
  return tableText(["case", "strategy", "seed", "real service", "simulator", "agree", "watcher at baseline, per 10 s"], rows);
}
