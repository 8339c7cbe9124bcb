/**
 * The table of docs/real-services.md, from docs/real-services.json (scripts/real-services.ts):
 * per service, what the probe measured past saturation, what the scenario file says of it, and
 * the simulator's verdicts on that scenario. test/unit/docs/real-services.test.ts holds the page
 * to it.
 */
export interface RealServicesFile {
  readonly services: readonly {
    readonly name: string;
    readonly system: Readonly<Record<string, unknown>>;
    readonly measured: Readonly<Record<string, number | string>>;
    readonly simulated: readonly {
      readonly fault: string;
      readonly strategies: readonly {
        readonly strategy: string;
        readonly verdict: string;
        readonly serverBackMs: number | null;
        readonly clientsBackMs: number | null;
      }[];
    }[];
  }[];
}

/** The flags past saturation a probe adds to a model's, as the file's system section has them. */
const PAST_SATURATION_FLAGS = ["max-concurrency", "queue-limit", "shed-with", "backlog", "cancel-on-disconnect"];

const FATES: readonly [string, string][] = [
  ["shed", "503"],
  ["connect-timeout", "connect timeout"],
  ["refused", "refused"],
  ["reset", "reset"],
];

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
    const flags = Object.entries(system)
      .filter(([name]) => PAST_SATURATION_FLAGS.includes(name))
      .map(([name, value]) => `${name}: ${value}`);
    const verdicts = service.simulated.map((run) =>
      run.strategies
        .map((strategy) => `${strategy.verdict}${strategy.clientsBackMs === null ? "" : ` (${strategy.clientsBackMs / 1000} s)`}`)
        .join(" / "),
    );
    return [
      service.name,
      held,
      nobody,
      measured.recovery === "none" ? "not back" : String(measured.recovery),
      `${system.model}${flags.length === 0 ? "" : `, ${flags.join(", ")}`}`,
      ...verdicts,
    ];
  });
  const faults = file.services[0]?.simulated.map((run) => `sim after ${run.fault}: fixed / full jitter`) ?? [];
  const header = ["service", "held, then the excess", "work for nobody", "back after", "scenario", ...faults];
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
