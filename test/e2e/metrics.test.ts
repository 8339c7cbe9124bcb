import { describe, expect, it } from "vitest";
import { type Scrape, scrape } from "../helpers/prometheus.ts";
import { type ClientReportLine, clientReportLines, serverLines } from "../helpers/output-lines.ts";
import { spawnCli, spawnServer, type SpawnedCli } from "../helpers/spawn-cli.ts";

const clientLine = (text: string) => clientReportLines([text])[0]!;
const serverLine = (text: string) => serverLines([text])[0]!;

/** Resolves with the next JSON line `program` prints that satisfies `accept`. */
async function jsonLine<T>(program: SpawnedCli, read: (line: string) => T, accept: (object: T) => boolean, timeoutMs = 20_000): Promise<T> {
  let index = program.stdoutLines.length;
  for (;;) {
    const line = await program.waitForLine(/^\{/, { stream: "stdout", fromIndex: index, timeoutMs });
    index = program.stdoutLines.indexOf(line, index) + 1;
    const object = read(line);
    if (accept(object)) return object;
  }
}

/** Counters of the client's windows added up, as of the windows printed so far. */
function clientTotals(windows: readonly ClientReportLine[]) {
  const sum = (pick: (window: ClientReportLine) => number) => windows.reduce((total, window) => total + pick(window), 0);
  return {
    ok: sum((window) => window.ok),
    error: sum((window) => window.errors),
    timedout: sum((window) => window.timedout),
    attempts: sum((window) => window.attempts),
    retries: sum((window) => window.retries),
    gaveUp: sum((window) => window.gaveUp),
    refused: sum((window) => window.errorKinds.refused ?? 0),
  };
}

/** Prometheus naming: one prefix, counters end in _total, base units (no _ms). */
function expectConventionalNames(result: Scrape): void {
  expect(result.types.size).toBeGreaterThan(5);
  for (const [name, type] of result.types) {
    expect(name).toMatch(/^thundering_herd_(server|client)_[a-z_]+$/);
    expect(name).not.toMatch(/_ms$|_milliseconds/);
    if (type === "COUNTER") expect(name).toMatch(/_total$/);
    else expect(name).not.toMatch(/_total$/);
  }
}

describe("Prometheus metrics", () => {
  it("are served by ./server -metrics and ./client -metrics-listen and agree with the JSON lines both print", async () => {
    const { server, url, port } = await spawnServer(["-metrics", "-json", "-report-interval", "200ms"]);
    const serverMetricsUrl = `http://127.0.0.1:${port}/metrics`;
    await server.waitForLine(new RegExp(`metrics on http://127\\.0\\.0\\.1:${port}/metrics`), { stream: "stderr" });
    const client = spawnCli("client", [
      ...["-url", url, "-metrics-listen", "127.0.0.1:0", "-json", "-seed", "3"],
      ...["-clients", "40", "-lambda", "0.4", "-timeout", "300ms", "-interval", "500ms", "-retry-budget"],
    ]);
    const announced = await client.waitForLine(/^client: metrics on http:\/\/127\.0\.0\.1:\d+\/metrics$/, { stream: "stderr" });
    const clientMetricsUrl = announced.replace("client: metrics on ", "");

    // Steady state, then the server stopped until a window shows timeouts, then resumed.
    await jsonLine(client, clientLine, (window) => window.ok > 0);
    server.signal("SIGSTOP");
    try {
      await jsonLine(client, clientLine, (window) => window.timedout > 0 && window.ok === 0);
    } finally {
      server.signal("SIGCONT");
    }
    await jsonLine(client, clientLine, (window) => window.ok > 0);

    // A counter scraped between two reports lies between what the two reports say.
    const clientBefore = clientTotals(clientReportLines(client.stdoutLines));
    const serverBefore = serverLines(server.stdoutLines).at(-1)!;
    const fromClient = await scrape(clientMetricsUrl);
    const fromServer = await scrape(serverMetricsUrl);
    const scrapedAt = Date.now();
    await jsonLine(client, clientLine, (window) => window.epochMs >= scrapedAt);
    await jsonLine(server, serverLine, (sample) => sample.epochMs >= scrapedAt);
    const clientAfter = clientTotals(clientReportLines(client.stdoutLines));
    const serverAfter = serverLines(server.stdoutLines).at(-1)!;

    expect(fromClient.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expectConventionalNames(fromClient.scrape);
    expectConventionalNames(fromServer.scrape);

    const c = fromClient.scrape;
    const between = (value: number | undefined, low: number, high: number, what: string) => {
      expect(value, what).toBeGreaterThanOrEqual(low);
      expect(value, what).toBeLessThanOrEqual(high);
    };
    for (const outcome of ["ok", "error", "timedout"] as const) {
      between(c.value("thundering_herd_client_requests_total", { outcome }), clientBefore[outcome], clientAfter[outcome], outcome);
    }
    expect(clientBefore.timedout).toBeGreaterThan(0);
    between(c.value("thundering_herd_client_attempts_total"), clientBefore.attempts, clientAfter.attempts, "attempts");
    between(c.value("thundering_herd_client_retries_total"), clientBefore.retries, clientAfter.retries, "retries");
    between(c.value("thundering_herd_client_gave_up_total"), clientBefore.gaveUp, clientAfter.gaveUp, "gave up");
    between(c.histogram("thundering_herd_client_request_duration_seconds")?.count, clientBefore.ok, clientAfter.ok, "latency count");
    expect(c.types.get("thundering_herd_client_request_duration_seconds")).toBe("HISTOGRAM");
    expect(c.value("thundering_herd_client_users")).toBe(40);
    between(c.value("thundering_herd_client_requests_in_flight"), 0, 40, "in flight");
    // The retry budget: 40 users of 10 tokens each, some spent on the timeouts.
    expect(c.value("thundering_herd_client_retry_budget_max_tokens")).toBe(10);
    between(c.value("thundering_herd_client_retry_budget_tokens"), 0, 400, "budget tokens");
    between(c.value("thundering_herd_client_retry_budget_exhausted_users"), 0, 40, "exhausted users");

    const s = fromServer.scrape;
    for (const outcome of ["served", "abandoned", "cancelled", "shed", "expired"] as const) {
      between(s.value("thundering_herd_server_requests_total", { outcome }), serverBefore[outcome], serverAfter[outcome], outcome);
    }
    between(s.value("thundering_herd_server_admitted_total"), serverBefore.admitted, serverAfter.admitted, "admitted");
    expect(s.value("thundering_herd_server_concurrency_limit")).toBe(30);

    // With the client gone and the server idle, the server's figures are exactly its report's.
    client.signal("SIGTERM");
    expect(await client.exited).toBe(0);
    const goneAt = Date.now();
    const idle = await jsonLine(server, serverLine, (sample) => sample.epochMs >= goneAt && sample.concurrency === 0);
    const final = (await scrape(serverMetricsUrl)).scrape;
    expect(final.value("thundering_herd_server_requests_in_service")).toBe(0);
    expect(final.value("thundering_herd_server_modelled_delay_seconds")).toBe(idle.lastDelayMs! / 1000);
    expect(final.value("thundering_herd_server_admitted_total")).toBe(idle.admitted);
    for (const outcome of ["served", "abandoned", "cancelled", "shed", "expired"] as const) {
      expect(final.value("thundering_herd_server_requests_total", { outcome }), outcome).toBe(idle[outcome]);
    }
    expect(idle.abandoned, "requests that timed out while the server was stopped").toBeGreaterThan(0);
    expect(final.value("thundering_herd_server_abandoned_in_service")).toBe(idle.abandonedInService);
    expect(final.value("thundering_herd_server_errors_injected_total")).toBe(idle.errorsInjected);
    const latency = final.histogram("thundering_herd_server_request_duration_seconds")!;
    expect(latency.count).toBe(idle.served);
    // No request is answered before the 100 ms base delay.
    expect(latency.buckets.get(0.05)).toBe(0);
    expect(latency.buckets.get(Infinity)).toBe(idle.served);
  });

  it("are off unless asked for, and a bad -metrics-listen is one line and exit 2", async () => {
    const { port } = await spawnServer();
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    const client = spawnCli("client", ["-metrics-listen", "localhost"]);
    expect(await client.exited).toBe(2);
    expect(client.stderrLines[0]).toBe(
      'client: invalid value "localhost" for flag -metrics-listen: must be host:port, e.g. 127.0.0.1:8070 or :8070 for all interfaces',
    );
  });
});
