import { parse } from "csv-parse/sync";
import { parseDuration } from "../../cli/duration.ts";
import type { StepMeasure } from "../fit/step-measure.ts";
import { concurrencyByLittle, lackedPercentiles, LITTLE_ASSUMED, type LoadTestFormat, LoadTestFileError, NOT_GIVEN } from "./load-test.ts";

const NAME = "CSV (a header row: concurrency, throughput, latency …)";

/** What a column may be called (case and spaces ignored); latencies are milliseconds unless a value carries its unit (41ms, 1.2s). */
const COLUMNS = {
  concurrency: /^(concurrency|users|vus|connections|clients|threads)$/,
  throughput: /^(throughput|rps|req\/s|reqs?\/sec|requests\/s|requests_per_sec(ond)?)$/,
  latency: /^(latency|mean|avg|average|mean_?latency|avg_?latency)(_?ms)?$/,
  p50: /^(p50|median|med)(_?ms)?$/,
  p90: /^p90(_?ms)?$/,
  p99: /^p99(_?ms)?$/,
  requests: /^(requests|count|total)$/,
  errors: /^(errors|failures|failed)$/,
} as const;
type Column = keyof typeof COLUMNS;

function columnsOf(header: readonly string[]): Partial<Record<Column, number>> {
  const found: Partial<Record<Column, number>> = {};
  header.forEach((name, index) => {
    const key = name.trim().toLowerCase().replace(/\s+/g, "_");
    for (const column of Object.keys(COLUMNS) as Column[])
      if (found[column] === undefined && COLUMNS[column].test(key)) found[column] = index;
  });
  return found;
}

/**
 * A CSV of load-test results, one row per run: its concurrency, throughput (answers per second)
 * and mean latency, and where the file has them its percentiles, requests and errors. Without a
 * concurrency column, the requests in the service are Little's law's.
 */
export const csv: LoadTestFormat = {
  name: NAME,
  recognizes: (text) => {
    const first = text.split(/\r?\n/, 1)[0] ?? "";
    // The first line's cells, unquoted: a sheet program may quote every header.
    const columns = columnsOf(first.split(",").map((cell) => cell.trim().replace(/^"(.*)"$/, "$1")));
    return columns.throughput !== undefined && columns.latency !== undefined;
  },
  read: (text) => {
    let records: string[][];
    try {
      records = parse(text, { skip_empty_lines: true, trim: true }) as string[][];
    } catch (error) {
      throw new LoadTestFileError(`${NAME}: ${(error as Error).message}`);
    }
    const [header, ...rows] = records;
    const columns = columnsOf(header!);
    if (rows.length === 0) throw new LoadTestFileError(`${NAME}: a header and no rows`);
    const given = rows.map((row, index) => stepOf(row, columns, index + 2));
    const idle = given.findIndex((step) => columns.concurrency !== undefined && !(step.concurrency > 0));
    if (idle >= 0) throw new LoadTestFileError(`${NAME}: line ${idle + 2}, concurrency ${given[idle]!.concurrency}: a run has users`);
    return {
      steps: given,
      // A sheet's users may pause between requests: formats.ts holds its rows to Little's law.
      ...(columns.concurrency === undefined ? {} : { users: "may pause" as const }),
      assumed: [
        ...(columns.concurrency === undefined ? [LITTLE_ASSUMED] : []),
        ...lackedPercentiles(given),
        ...(columns.errors === undefined ? ["errors: no errors column, counted as none"] : []),
      ],
    };
  },
};

function stepOf(row: readonly string[], columns: Partial<Record<Column, number>>, line: number): StepMeasure {
  const cell = (column: Column) => (columns[column] === undefined ? undefined : row[columns[column]]!);
  const number = (column: Column, text: string | undefined) => {
    const value = Number(text);
    if (text === undefined || text === "" || !Number.isFinite(value) || value < 0)
      throw new LoadTestFileError(`${NAME}: line ${line}, ${column} "${text ?? ""}" is not a number of 0 or more`);
    return value;
  };
  const ms = (column: Column, text: string | undefined) => {
    if (text !== undefined && /[a-zµ]$/i.test(text)) {
      let value: number;
      try {
        value = parseDuration(text);
      } catch {
        throw new LoadTestFileError(`${NAME}: line ${line}, ${column} "${text}" is neither milliseconds nor a duration such as 41ms`);
      }
      if (!(value >= 0)) throw new LoadTestFileError(`${NAME}: line ${line}, ${column} "${text}" is not a duration of 0 or more`);
      return value;
    }
    return number(column, text);
  };
  const optionalMs = (column: Column) => (columns[column] === undefined ? NOT_GIVEN : ms(column, cell(column)));
  const throughputPerSec = number("throughput", cell("throughput"));
  const meanLatencyMs = ms("latency", cell("latency"));
  const concurrency =
    columns.concurrency === undefined ? concurrencyByLittle(throughputPerSec, meanLatencyMs) : number("concurrency", cell("concurrency"));
  return {
    concurrency,
    throughputPerSec,
    meanLatencyMs,
    p50Ms: optionalMs("p50"),
    p90Ms: optionalMs("p90"),
    p99Ms: optionalMs("p99"),
    requests: columns.requests === undefined ? throughputPerSec : number("requests", cell("requests")),
    errors: columns.errors === undefined ? 0 : number("errors", cell("errors")),
  };
}
