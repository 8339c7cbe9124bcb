import parsePrometheusTextFormat from "parse-prometheus-text-format";

/**
 * A scrape, parsed by a real Prometheus text-format parser. Tests use only this small
 * interface, so the parser behind it can be swapped.
 */
export interface Scrape {
  /** Every metric family's name and type (COUNTER, GAUGE, HISTOGRAM, …). */
  readonly types: ReadonlyMap<string, string>;
  /** The value of a counter or gauge series; undefined when the series is absent. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** A histogram's count, sum and cumulative buckets (by upper bound). */
  histogram(name: string): { count: number; sum: number; buckets: Map<number, number> } | undefined;
}

const number = (text: string) => (text === "+Inf" ? Infinity : text === "-Inf" ? -Infinity : Number(text));

export function parseScrape(text: string): Scrape {
  const families = parsePrometheusTextFormat(text);
  const family = (name: string) => families.find((candidate) => candidate.name === name);
  return {
    types: new Map(families.map((candidate) => [candidate.name, candidate.type])),
    value(name, labels = {}) {
      const sample = family(name)?.metrics.find((metric) =>
        Object.entries(labels).every(([key, value]) => (metric.labels ?? {})[key] === value),
      );
      return sample?.value === undefined ? undefined : number(sample.value);
    },
    histogram(name) {
      const sample = family(name)?.metrics[0];
      if (sample?.buckets === undefined) return undefined;
      return {
        count: number(sample.count ?? "NaN"),
        sum: number(sample.sum ?? "NaN"),
        buckets: new Map(Object.entries(sample.buckets).map(([bound, count]) => [number(bound), number(count)])),
      };
    },
  };
}

/** GETs a /metrics URL and parses it; also returns the content type. */
export async function scrape(url: string): Promise<{ scrape: Scrape; contentType: string; text: string }> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
  const text = await response.text();
  return { scrape: parseScrape(text), contentType: response.headers.get("content-type") ?? "", text };
}
