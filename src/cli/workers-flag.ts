import type { FlagSpec } from "./flags.ts";

/**
 * A program's -workers flag (the client's threads, the server's processes): a count up to
 * `max`, or `auto`, which the program resolves from the cores.
 */
export function workersFlag(max: number, description: string) {
  return {
    name: "workers",
    group: "run",
    kind: "string",
    default: "1",
    placeholder: "n|auto",
    description,
    check: (text: string) => {
      if (text === "auto") return undefined;
      const value = Number(text);
      return /^\d+$/.test(text) && value >= 1 && value <= max ? undefined : `must be auto or an integer from 1 to ${max}`;
    },
  } as const satisfies FlagSpec;
}
