import { describe, expect, it } from "vitest";
import { main } from "../../../src/sim/main.ts";

async function simOutput(args: readonly string[]): Promise<string> {
  let stdout = "";
  const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => true }, env: {} };
  expect(await main(args, io as never)).toBe(0);
  return stdout;
}

/** 200 users, a 2 s outage at 3 s, 20 s: small enough for a unit test, long enough for the backoff's cap to matter. */
const SMALL = ["-clients", "200", "-lambda", "2", "-outage-at", "3s", "-outage", "2s", "-duration", "20s", "-parallel", "1", "-quiet"];

describe("./sim -strategies with a parameter flag", () => {
  it("gives the flag to the strategies that read it, as the demo does: the same run as that strategy alone", async () => {
    const compared = await simOutput([...SMALL, "-strategies", "fixed,exponential-backoff", "-max-delay", "300ms"]);
    const alone = await simOutput([...SMALL, "-strategy", "exponential-backoff", "-max-delay", "300ms"]);
    const uncapped = await simOutput([...SMALL, "-strategy", "exponential-backoff"]);
    const row = (output: string) => output.split("\n").find((line) => line.startsWith("exponential-backoff "));
    expect(row(compared)).toBeDefined();
    expect(row(compared)).toBe(row(alone));
    // The cap changes the run, so the equality above says the flag reached it.
    expect(row(alone)).not.toBe(row(uncapped));
  });
});
