import type { OccLine } from "./occ-line.ts";

/** An OCC line as the programs print it with -json (read back by parseOccLine). */
export function formatOccJson(line: OccLine): string {
  return JSON.stringify(line);
}
