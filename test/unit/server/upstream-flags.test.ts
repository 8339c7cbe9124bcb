import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { RETRY_POLICY_FLAGS } from "../../../src/client/options.ts";
import { parseServerArgs, resolveServerProgramOptions, SERVER_PROGRAM_FLAGS } from "../../../src/server/options.ts";

function resolve(args: string[]) {
  const parsed = parseServerArgs(args);
  if (parsed.kind !== "run") throw new Error("help");
  return resolveServerProgramOptions(parsed.values);
}

const DB = "http://127.0.0.1:8071/api";

describe("./server -upstream (a middle tier) and its -upstream-… flags", () => {
  it("takes every retry-policy flag of the client under the prefix, with the client's kinds and defaults", () => {
    const names = new Set(SERVER_PROGRAM_FLAGS.map((flag) => flag.name));
    for (const flag of RETRY_POLICY_FLAGS) {
      expect(names.has(`upstream-${flag.name}` as never)).toBe(true);
      const prefixed = SERVER_PROGRAM_FLAGS.find((own) => own.name === `upstream-${flag.name}`)!;
      expect(prefixed).toMatchObject({ kind: flag.kind, default: flag.default });
    }
    expect(names.has("upstream-instances" as never)).toBe(false); // the tier is one client instance
  });

  it("is off without -upstream, and reads the tier's own policy with it", () => {
    expect(resolve([]).upstream).toBeUndefined();
    const options = resolve([
      ...["-model", "queue", "-upstream", `${DB},http://127.0.0.1:8072/api`, "-upstream-fanout", "2"],
      ...["-upstream-max-attempts", "3", "-upstream-timeout", "1s", "-upstream-budget", "yandex", "-upstream-propagate-deadline"],
    ]);
    expect(options.upstream!.targets).toEqual([DB, DB, "http://127.0.0.1:8072/api", "http://127.0.0.1:8072/api"]);
    expect(options.upstream!.policy).toMatchObject({
      strategy: "fixed",
      timeoutMs: 1000,
      propagateDeadline: true,
      retry: { maxAttempts: 3, fleet: { instances: 1, budget: { kind: "yandex" } } },
    });
  });

  it("refuses a middle tier without the queue model, a policy flag without -upstream, and names the flags as ./server knows them", () => {
    const cases: [string[], string][] = [
      [["-upstream", DB], "-upstream needs -model queue (a middle tier holds a thread while it calls upstream), not -model exponential"],
      [["-upstream-max-attempts", "3"], "-upstream-max-attempts applies to a middle tier: give -upstream URL too"],
      [["-upstream-fanout", "2"], "-upstream-fanout applies to a middle tier: give -upstream URL too"],
      [["-model", "queue", "-upstream", DB, "-upstream-budget-ttl", "2s"], "-upstream-budget-ttl needs -upstream-budget finagle"],
      [
        ["-model", "queue", "-upstream", DB, "-upstream-retry-budget", "-upstream-budget", "envoy"],
        "-upstream-retry-budget is -upstream-budget grpc; it cannot be combined with -upstream-budget envoy",
      ],
    ];
    for (const [args, message] of cases) {
      expect(() => resolve(args)).toThrow(UsageError);
      expect(() => resolve(args)).toThrow(message);
    }
    expect(() => parseServerArgs(["-upstream", "ftp://db"])).toThrow('"ftp://db" must be an http:// or https:// URL');
  });
});
