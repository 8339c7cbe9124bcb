import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect } from "vitest";
import { main } from "../../src/sim/main.ts";
import { capturedIo } from "./captured-io.ts";

/* The seeded runs of scripts/sim-same-output.runs and their committed output, test/fixtures/sim-same-output/. */

const ROOT = resolve(import.meta.dirname, "../..");
const REFERENCE = resolve(ROOT, "test/fixtures/sim-same-output");

/** Every run of the list; `validate`: too long for npm test, run by test/validate/same-output.test.ts. */
export const SAME_OUTPUT_RUNS = readFileSync(resolve(ROOT, "scripts/sim-same-output.runs"), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "" && !line.startsWith("#"))
  .map((line) => {
    const [name, flags, tag] = line.split("|") as [string, string, string?];
    return { name, argv: flags.trim().split(/\s+/), long: tag?.trim() === "validate" };
  });

/** One run in process: its stdout and event counts against the reference. */
export async function expectSameOutput(name: string, argv: readonly string[]): Promise<void> {
  const { io, stdout, stderr } = capturedIo();
  expect(await main([...argv, "-json", "-quiet"], io), stderr()).toBe(0);
  const events = [...stderr().matchAll(/(\d+) events/g)].map((match) => `${match[1]} events`);
  const reference = (suffix: string) => readFileSync(resolve(REFERENCE, `${name}${suffix}`), "utf8");
  expect(stdout(), `${name}: stdout`).toBe(reference(".json"));
  expect(events, `${name}: events`).toEqual(reference(".events").split("\n").filter(Boolean));
}
