import { describe, expect, it } from "vitest";
import { seededRandom } from "../../src/backoff/random.ts";
import { getJson, rawGet } from "../helpers/raw-http.ts";
import { startScriptedServer } from "../helpers/scripted-server.ts";
import { SMALL_SIM_SCENARIO } from "../helpers/small-scenario.ts";
import { clientReportLines, serverLines } from "../helpers/output-lines.ts";
import { spawnCli, spawnServer } from "../helpers/spawn-cli.ts";

interface Stats {
  concurrency: number;
  admitted: number;
  served: number;
  abandoned: number;
  cancelled: number;
  expired: number;
  shed: number;
  errorsInjected: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const statsOf = (url: string) => getJson<Stats>(url.replace("/api", "/stats"));

/** Polls the server's /stats until `condition` holds (the test's own time limit bounds it). */
async function statsWhen(url: string, condition: (stats: Stats) => boolean): Promise<Stats> {
  for (;;) {
    const stats = await statsOf(url);
    if (condition(stats)) return stats;
    await sleep(20);
  }
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(10);
}

describe("fleet protection on the wire", () => {
  it("lists the new flags in -h and rejects bad values in one line with exit 2", async () => {
    const server = spawnCli("server", ["-h"]);
    expect(await server.exited).toBe(0);
    for (const flag of ["-retry-after duration", "-deadline-aware", "-error-rate p", "-seed n"]) {
      expect(server.stdoutLines.join("\n")).toContain(flag);
    }
    const client = spawnCli("client", ["-h"]);
    expect(await client.exited).toBe(0);
    for (const flag of ["-arrivals model", "-rate per-second", "-max-chains n", "-honor-retry-after", "-propagate-deadline"]) {
      expect(client.stdoutLines.join("\n")).toContain(flag);
    }
    for (const [program, args, message] of [
      ["server", ["-error-rate", "1.5"], 'server: invalid value "1.5" for flag -error-rate: must be <= 1'],
      ["client", ["-arrivals", "open"], "client: -arrivals open needs -rate, the arrivals per second"],
      ["client", ["-rate", "50"], "client: -rate applies to -arrivals open; closed users send at -clients / -lambda"],
      ["sim", ["-deadline-aware"], "sim: -deadline-aware needs -propagate-deadline: without it the clients send no deadline"],
    ] as const) {
      const cli = spawnCli(program, args);
      expect(await cli.exited).toBe(2);
      expect(cli.stderrLines[0]).toBe(message);
    }
  });

  it("server pushback: a shed request gets 503 with Retry-After in whole seconds, rounded up, and the totals count it", async () => {
    const { server, port, url } = await spawnServer(["-max-concurrency", "1", "-retry-after", "1500ms", "-baseDelay", "1h", "-json"]);
    const held = rawGet(port);
    await statsWhen(url, (stats) => stats.concurrency === 1);
    const shed = await rawGet(port).response;
    expect(shed).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(shed).toMatch(/\r\nretry-after: 2\r\n/i);
    const line = await server.waitForLine(/"shed":1/, { stream: "stdout" });
    expect(serverLines([line])[0]).toMatchObject({ shed: 1, expired: 0, errorsInjected: 0, concurrency: 1 });
    server.signal("SIGTERM");
    expect(await server.exited).toBe(0);
    expect(server.stderrLines.join("\n")).toMatch(
      /SIGTERM: stopped; served 0 \(errors injected 0\), abandoned 0, cancelled 0, expired 0, shed 1, still in service 1/,
    );
    held.socket.destroy();
  });

  it("a client that honors Retry-After sends its next attempt no earlier than the server asked", async () => {
    const server = await startScriptedServer((_request, response) => response.writeHead(503, { "retry-after": "1" }).end());
    const cli = spawnCli("client", ["-url", server.url, "-clients", "1", "-lambda", "0.01", "-honor-retry-after", "-json"]);
    await until(() => server.arrivals.length >= 4);
    cli.signal("SIGINT");
    expect(await cli.exited).toBe(0);
    // Each 503 left the server when its request arrived; the client waited at least 1 s after receiving it.
    const gaps = server.arrivals.slice(1).map((time, index) => time - server.arrivals[index]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(1_000);
    expect(cli.stderrLines[0]).toMatch(/honoring Retry-After/);
  });

  it("deadline propagation: the client sends its deadline, and a deadline-aware server takes the request out at it", async () => {
    const seen: { deadline: string | undefined; arrivedEpochMs: number }[] = [];
    const scripted = await startScriptedServer((request) => {
      seen.push({ deadline: request.headers["x-request-deadline-ms"] as string | undefined, arrivedEpochMs: Date.now() });
    }); // never answers: the client times out
    const startedEpochMs = Date.now();
    const client = spawnCli("client", [
      "-url",
      scripted.url,
      "-clients",
      "1",
      "-lambda",
      "0.01",
      "-timeout",
      "300ms",
      "-propagate-deadline",
    ]);
    await until(() => seen.length >= 2);
    client.signal("SIGINT");
    for (const { deadline, arrivedEpochMs } of seen) {
      expect(deadline).toMatch(/^\d+$/);
      // Sent (send time + 300 ms) after the client started and before the request arrived.
      expect(Number(deadline)).toBeGreaterThanOrEqual(startedEpochMs + 300);
      expect(Number(deadline)).toBeLessThanOrEqual(arrivedEpochMs + 300 + 1);
    }

    // Against the real server: requests that would take 5 s leave service at their 200 ms deadline.
    const aware = await spawnServer(["-baseDelay", "5s", "-deadline-aware"]);
    const propagating = spawnCli("client", [
      "-url",
      aware.url,
      "-clients",
      "3",
      "-lambda",
      "0.05",
      "-timeout",
      "200ms",
      "-propagate-deadline",
    ]);
    const stats = await statsWhen(aware.url, (current) => current.expired >= 6);
    expect(stats).toMatchObject({ served: 0, abandoned: 0, cancelled: 0 });
    propagating.signal("SIGINT");
    expect(await propagating.exited).toBe(0);

    // The same without -deadline-aware: the work goes on for nobody.
    const unaware = await spawnServer(["-baseDelay", "1s"]);
    const ignored = spawnCli("client", [
      "-url",
      unaware.url,
      "-clients",
      "3",
      "-lambda",
      "0.05",
      "-timeout",
      "200ms",
      "-propagate-deadline",
    ]);
    const wasted = await statsWhen(unaware.url, (current) => current.abandoned >= 6);
    expect(wasted.expired).toBe(0);
    ignored.signal("SIGINT");
  });

  it("transient faults: -error-rate answers the seeded fraction 500, exactly as the seed draws", async () => {
    const { server, url } = await spawnServer(["-baseDelay", "1ms", "-error-rate", "0.3", "-seed", "11"]);
    expect(await server.waitForLine(/answering 0\.3 of requests 500/, { stream: "stderr" })).toMatch(/seed 11$/);
    const statuses: number[] = [];
    for (let index = 0; index < 300; index++) {
      const response = await fetch(url);
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    const replay = seededRandom(11);
    expect(statuses).toEqual(statuses.map(() => (replay.uniform() < 0.3 ? 500 : 200)));
    // Binomial(300, 0.3): mean 90, standard deviation 7.9; the seed's count is within 4 of them.
    const errors = statuses.filter((status) => status === 500).length;
    expect(Math.abs(errors - 90)).toBeLessThan(4 * 7.9);
    expect(await statsOf(url)).toMatchObject({ served: 300, errorsInjected: errors });
    server.signal("SIGTERM");
    expect(await server.exited).toBe(0);
    expect(server.stderrLines.join("\n")).toContain(`served 300 (errors injected ${errors})`);
  });

  it("open-loop arrivals keep coming at the rate while every request hangs", async () => {
    const server = await startScriptedServer(() => {}); // never answers
    const cli = spawnCli("client", [
      "-url",
      server.url,
      "-arrivals",
      "open",
      "-rate",
      "100",
      "-timeout",
      "1m",
      "-interval",
      "1h",
      "-json",
      "-seed",
      "5",
    ]);
    // Closed users would be stuck at one request each; open-loop arrivals do not wait for answers.
    await until(() => server.arrivals.length >= 250);
    cli.signal("SIGINT");
    expect(await cli.exited).toBe(0);
    const summary = clientReportLines(cli.stdoutLines).find((line) => line.summary === true)!;
    expect(summary.retries).toBe(0);
    expect(summary.ok).toBe(0);
    expect(summary.droppedArrivals).toBe(0);
    // Arrivals in the run's T seconds are Poisson with mean 100 T; the count is within 5 standard deviations.
    const expected = (100 * summary.windowMs) / 1000;
    expect(Math.abs(summary.attempts - expected)).toBeLessThan(5 * Math.sqrt(expected));
    expect(server.arrivals.length).toBeLessThanOrEqual(summary.attempts);
  });

  it("the simulator models the same: shed requests carry Retry-After, deadlines expire, errors are injected, arrivals can be open", async () => {
    const small = SMALL_SIM_SCENARIO;
    const run = async (args: readonly string[]) => {
      const cli = spawnCli("sim", [...small, "-quiet", ...args]);
      expect(await cli.exited).toBe(0);
      return cli.stdoutLines.join("\n");
    };
    const totals = (text: string) => {
      const match = /^server: served (\d+) \(errors injected (\d+)\), abandoned (\d+), cancelled (\d+), expired (\d+), shed (\d+)/m.exec(
        text,
      )!;
      const [served, injected, abandoned, cancelled, expired, shed] = match.slice(1).map(Number) as [
        number,
        number,
        number,
        number,
        number,
        number,
      ];
      return { served, injected, abandoned, cancelled, expired, shed };
    };
    expect(totals(await run([]))).toMatchObject({ expired: 0, shed: 0, injected: 0 });
    const deadlines = totals(await run(["-propagate-deadline", "-deadline-aware"]));
    expect(deadlines.expired).toBeGreaterThan(0);
    expect(deadlines.abandoned).toBe(0);
    const shedding = await run(["-max-concurrency", "50", "-retry-after", "2s", "-honor-retry-after"]);
    expect(totals(shedding).shed).toBeGreaterThan(0);
    const errors = totals(await run(["-error-rate", "0.2"]));
    expect(errors.injected / errors.served).toBeGreaterThan(0.15);
    expect(errors.injected / errors.served).toBeLessThan(0.25);
    const open = await run(["-arrivals", "open", "-rate", "100"]);
    expect(open).toMatch(/^summary: 24\.0s, .*, alive: \d+, dropped arrivals: 0$/m);
  });
});
