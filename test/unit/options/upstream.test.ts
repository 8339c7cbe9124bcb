import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { RETRY_POLICY_FLAGS } from "../../../src/config/load.ts";
import { parseServerArgs, resolveServerProgramOptions, SERVER_PROGRAM_FLAGS } from "../../../src/options/server.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { parseServerLine } from "../../../src/contracts/server-line.ts";
import { serverLine } from "../../../src/contracts/server-line-writer.ts";
import { DEFAULT_THREAD_POOL } from "../../../src/model/servers/queue.ts";
import { UpstreamPool } from "../../../src/model/servers/upstream-pool.ts";
import { formatServerLine, formatServerTotals } from "../../../src/contracts/server-text.ts";

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
    expect(() => parseServerArgs(["-upstream", "ftp://db"])).toThrow('"ftp://db": must be an http:// or https:// URL');
  });
});

describe("./server -upstream that cannot be called", () => {
  it("refuses the server's own address: with an explicit -listen port, on the host listened on or a loopback it accepts", () => {
    const own = (listen: string, url: string) => `-upstream ${url} is this server's own address (-listen ${listen}): it would call itself`;
    const selfCalls: [string, string][] = [
      ["127.0.0.1:8071", "http://127.0.0.1:8071/api"],
      [":8071", "http://localhost:8071/api"],
      [":8071", "http://[::1]:8071/api"],
      ["0.0.0.0:8071", "http://0.0.0.0:8071/api"],
      ["127.0.0.1:80", "http://localhost/api"],
      ["10.0.0.5:8071", "http://10.0.0.5:8071/api"],
    ];
    for (const [listen, url] of selfCalls) {
      expect(() => resolve(["-listen", listen, "-model", "queue", "-upstream", `http://127.0.0.1:9/api,${url}`])).toThrow(
        new UsageError(own(listen, url)),
      );
    }
    // Another port, another loopback family, or a port not known yet (0) is another server.
    for (const [listen, url] of [
      ["127.0.0.1:8071", "http://127.0.0.1:8072/api"],
      ["127.0.0.1:8071", "http://[::1]:8071/api"],
      ["127.0.0.1:0", "http://127.0.0.1:8071/api"],
    ]) {
      expect(resolve(["-listen", listen!, "-model", "queue", "-upstream", url!]).upstream?.targets).toEqual([url]);
    }
  });

  it("names the port, not the scheme, when the port is out of range", () => {
    expect(() => parseServerArgs(["-upstream", "http://127.0.0.1:99999/api"])).toThrow(
      'invalid value "http://127.0.0.1:99999/api" for flag -upstream: "http://127.0.0.1:99999/api": port 99999 is out of range (1 to 65535)',
    );
    expect(() => parseServerArgs(["-upstream", "http://[::1]:0/api"])).toThrow('"http://[::1]:0/api": port 0 is out of range');
  });

  it("never quotes a URL's user name and password in its refusals", () => {
    const refusals = [
      () => parseServerArgs(["-upstream", "http://alice:s3cret@127.0.0.1:99999/api"]),
      () => resolve(["-listen", "127.0.0.1:8071", "-model", "queue", "-upstream", "http://alice:s3cret@127.0.0.1:8071/api"]),
    ];
    for (const refusal of refusals) {
      expect(refusal).toThrow(UsageError);
      expect(refusal).toThrow("//***@127.0.0.1:");
      expect(refusal).not.toThrow("s3cret");
    }
  });
});

describe("a middle tier's figures", () => {
  it("follow the line's unchanged prefix, and travel in the JSON line through its contract", () => {
    const clock = new ManualClock();
    const pool = new UpstreamPool(
      clock,
      { ...DEFAULT_THREAD_POOL, threads: 2, cancelOnDisconnect: false, random: seededRandom(1) },
      { startCall: () => {}, cancelCall: () => {} },
    );
    for (let index = 0; index < 3; index++) pool.admit();
    for (const isRetry of [false, false, true]) pool.attemptSent(isRetry);
    pool.attemptEnded("error");
    const snapshot = pool.snapshot();
    expect(formatServerLine(0, snapshot, "utc")).toBe(
      "Jan  1 00:00:00.000: concurrency:    3, last delay: 0s, queue: 1, threads busy: 2/2, upstream: 2 calling, 3 attempts, 0 failed",
    );
    expect(formatServerTotals(snapshot)).toMatch(/; upstream: requests 2, attempts 3 \(ok 0, error 1, timedout 0\), refused 0, failed 0$/);
    const line = parseServerLine(JSON.stringify(serverLine(0, snapshot)), { file: "test", line: 1 });
    expect(line.upstream).toEqual({
      requests: 2,
      attempts: 3,
      attemptsOk: 0,
      attemptsError: 1,
      attemptsTimedout: 0,
      refused: 0,
      failures: 0,
      inFlight: 2,
    });
  });
});
