import { describe, expect, it } from "vitest";
import { clientArgsOfRun, parseStrategies } from "../../../src/strategies/runs.ts";
import { CLIENT_FLAGS, parseClientArgs, resolveClientOptions } from "../../../src/options/client.ts";

function clientOptions(args: readonly string[]) {
  const parsed = parseClientArgs(args);
  if (parsed.kind !== "run") throw new Error("expected flag values");
  return resolveClientOptions(parsed.values);
}

describe("clientArgsOfRun", () => {
  const [fixed, fullJitter] = parseStrategies("fixed,full-jitter");
  const given = ["-clients", "200", "-min-delay", "20s", "--max-delay=40s", "-simple-backoff-delay", "0s", "-max-attempts", "3"];

  it("leaves out, for each strategy, the parameter flags it does not read, with their values", () => {
    expect(clientArgsOfRun(fixed!, given, CLIENT_FLAGS)).toEqual(["--clients=200", "--simple-backoff-delay=0s", "--max-attempts=3"]);
    expect(clientArgsOfRun(fullJitter!, given, CLIENT_FLAGS)).toEqual([
      "--clients=200",
      "--min-delay=20s",
      "--max-delay=40s",
      "--max-attempts=3",
    ]);
  });

  it("gives each strategy's client flags it accepts (Brooker's collapse example compares fixed with full jitter)", () => {
    expect(() => clientOptions([...fixed!.clientArgs, ...given])).toThrow(/does not apply to -strategy fixed/);
    for (const run of [fixed!, fullJitter!])
      expect(() => clientOptions([...run.clientArgs, ...clientArgsOfRun(run, given, CLIENT_FLAGS)])).not.toThrow();
  });
});
