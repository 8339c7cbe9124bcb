import { describe, expect, it } from "vitest";
import { getJson, rawGet } from "../helpers/raw-http.ts";
import { spawnCli, spawnServer } from "../helpers/spawn-cli.ts";

interface QueueStats {
  served: number;
  queueLength: number;
  threadsBusy: number;
  threads: number;
}

describe("server models", () => {
  it("./server -model queue serves, states its capacity, and reports its threads and queue", async () => {
    const { server, port } = await spawnServer(["-model", "queue", "-threads", "8", "-service-time", "20ms", "-report-interval", "100ms"]);
    const model = await server.waitForLine(/^server: model queue/, { stream: "stderr" });
    expect(model).toContain("capacity 400 req/s");
    expect(model).toContain("tipping point 799 in the server");
    const answers = await Promise.all(Array.from({ length: 20 }, () => rawGet(port).response));
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nOK$/);
    const stats = await getJson<QueueStats>(`http://127.0.0.1:${port}/stats`);
    expect(stats).toMatchObject({ served: 20, queueLength: 0, threadsBusy: 0, threads: 8 });
    const line = await server.waitForLine(/queue: \d+, threads busy: \d+\/8$/, { stream: "stdout" });
    expect(line).toMatch(
      /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d\.\d{3}: concurrency: {1,4}\d+, last delay: \S+, queue: \d+, threads busy: \d+\/8$/,
    );
  });

  it("./sim -model linear runs Brooker's collapse model with a fault schedule and judges it against its tipping point", async () => {
    const cli = spawnCli("sim", [
      ...["-model", "linear", "-baseDelay", "1s", "-slope", "10ms", "-timeout", "3s"],
      ...["-clients", "300", "-lambda", "5", "-interval", "2s", "-duration", "40s"],
      ...["-faults", "stop@6s+4s, spike@15s+5s*2"],
      ...["-strategies", "fixed,exponential", "-quiet", "-parallel", "1"],
    ]);
    expect(await cli.exited).toBe(0);
    const stderr = cli.stderrLines.join("\n");
    expect(stderr).toContain(
      "sim: model linear (baseDelay 1s + slope 10ms per request in service): capacity 66.6 req/s (at 199 in the server)",
    );
    expect(stderr).toContain("tipping point 200 in the server");
    expect(stderr).toContain("sim: faults: stop@6s+4s, spike@15s+5s*2");
    const stdout = cli.stdoutLines.join("\n");
    expect(stdout).toMatch(/^fixed +(collapsed|recovering|recovered) /m);
    expect(stdout).toMatch(/limit of 199/);
  });

  it("refuses a flag the model does not read, in one line with exit 2", async () => {
    const cli = spawnCli("sim", ["-model", "queue", "-limit", "5"]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderrLines.filter((line) => line !== "")[0]).toBe(
      "sim: -limit does not apply to -model queue (it takes -threads, -service-time, -service-dist, -service-sigma, -queue-order, -queue-limit)",
    );
  });
});
