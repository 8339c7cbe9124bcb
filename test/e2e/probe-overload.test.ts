import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { hasDebianGunicorn } from "../helpers/retrograde-service.ts";
import { runTogether } from "../helpers/run-together.ts";
import { type SleeperService, startSleeperService } from "../helpers/sleeper-service.ts";
import { spawnCli, spawnServer } from "../helpers/spawn-cli.ts";
import { temporaryDir } from "../helpers/temporary-dirs.ts";

/*
 * The probe's phase past saturation (docs/probe.md, "Past saturation") on three services that
 * differ only above it, each 4 workers of 50 ms: Debian's gunicorn as it comes (its listen backlog
 * of 2048 holds every excess connection, and it serves requests whose client has gone), the same
 * with --backlog 16 (past 4 + 17 held, the kernel drops the SYNs: connect timeouts, -shed-with drop in
 * the scenario), and ./server's
 * queue model with -cancel-on-disconnect (it drops what its clients left). The three run side by
 * side: each waits on its workers' sleeps far more than on the cores.
 */

/**
 * Steps that saturate 4 workers (8 and 16 users level with 4: one of them whatever the noise of
 * short steps), short; a phase of 1 s at 3 × capacity.
 */
const FLAGS = [
  "-steps",
  "1,2,4,8,16",
  "-step-duration",
  "300ms",
  "-step-requests",
  "30",
  "-overload-time",
  "1s",
  "-overload-settle",
  "20s",
];

/** What a probe printed, and the scenario it wrote. */
interface Probed {
  readonly code: number | string;
  readonly stdout: readonly string[];
  readonly output: string;
  readonly scenario: { system: Record<string, unknown>; measured: Record<string, number | string> };
}

const services: SleeperService[] = [];
afterAll(() => Promise.all(services.map((service) => service.stop())));

async function probed(url: string): Promise<Probed> {
  const out = join(temporaryDir("thundering-herd-overload-"), "service.yaml");
  const run = spawnCli("probe", [...FLAGS, "-out", out, url]);
  const code = await run.exited;
  const output = [...run.stderrLines, ...run.stdoutLines].join("\n");
  return { code, stdout: run.stdoutLines, output, scenario: code === 0 ? parse(readFileSync(out, "utf8")) : { system: {}, measured: {} } };
}

async function gunicorn(args: readonly string[] = []): Promise<Probed> {
  expect(hasDebianGunicorn(), "needs Debian's gunicorn: apt-get install python3-gunicorn").toBe(true);
  const service = await startSleeperService(4, 50, args);
  services.push(service);
  return probed(service.url);
}

const line = (run: Probed, start: string) => run.stdout.find((candidate) => candidate.startsWith(start)) ?? `(no line "${start}")`;

describe("probe past saturation: what three services do with excess work", () => {
  const run = runTogether(
    {
      asItComes: () => gunicorn(),
      smallBacklog: () => gunicorn(["--backlog", "16"]),
      cancels: async () =>
        probed((await spawnServer(["-model", "queue", "-threads", "4", "-service-time", "50ms", "-cancel-on-disconnect"])).url),
    },
    { timeoutMs: 120_000 },
  );

  it("gunicorn as it comes holds every excess request, serves the work of clients that left, and comes back", () => {
    const probe = run("asItComes");
    expect(probe.code, probe.output).toBe(0);
    expect(line(probe, "overload held: "), probe.output).toMatch(/^overload held: up to \d+ requests at once, and turned none away/);
    expect(probe.scenario.measured, probe.output).toMatchObject({ shed: 0, "connect-timeout": 0, refused: 0, reset: 0 });
    const { served, "held-past-timeout": heldPastTimeout, "overload-requests": requests } = probe.scenario.measured;
    expect(Number(served) + Number(heldPastTimeout), probe.output).toBe(requests);
    expect(line(probe, "work for nobody: "), probe.output).toMatch(/: it serves requests whose client has gone \(\d+ % served\)$/);
    expect(probe.scenario.measured["work-for-nobody"], probe.output).toBeGreaterThanOrEqual(0.5);
    expect(line(probe, "recovery: "), probe.output).toMatch(/^recovery: back at baseline .* [\d.]+ s after the last arrival$/);
    expect(probe.scenario.system, probe.output).not.toHaveProperty("cancel-on-disconnect");
  });

  it("with --backlog 16, it turns the excess away with connect timeouts once its 4 workers and 17 places are full: -shed-with drop", () => {
    const probe = run("smallBacklog");
    expect(probe.code, probe.output).toBe(0);
    expect(line(probe, "overload held: "), probe.output).toMatch(
      /when it began to turn work away .* the excess was mostly connect timeout$/,
    );
    // 4 in the workers and the kernel's accept queue of backlog + 1 (Linux's sk_acceptq_is_full).
    const held = Number(probe.scenario.measured["held-at-excess"]);
    expect(held, probe.output).toBeGreaterThanOrEqual(21);
    expect(held, probe.output).toBeLessThanOrEqual(30);
    // Dropped unanswered past what it held: the queue model's threads and places (and its backlog while stopped), or another model's limit.
    const { system } = probe.scenario;
    expect(system["shed-with"], probe.output).toBe("drop");
    if (system.model === "queue")
      expect([Number(system.threads) + Number(system["queue-limit"]), system.backlog], probe.output).toEqual([held, system["queue-limit"]]);
    else expect(system["max-concurrency"], probe.output).toBe(held);
  });

  it("./server with -cancel-on-disconnect drops the work of clients that left, and the scenario says so", () => {
    const probe = run("cancels");
    expect(probe.code, probe.output).toBe(0);
    expect(line(probe, "work for nobody: "), probe.output).toMatch(/: it drops requests whose client has gone \(\d+ % served\)$/);
    expect(probe.scenario.measured["work-for-nobody"], probe.output).toBeLessThan(0.5);
    expect(probe.scenario.system["cancel-on-disconnect"], probe.output).toBe(true);
  });
});
