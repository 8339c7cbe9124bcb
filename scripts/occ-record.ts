/**
 * Records docs/occ-summary.json: the AWS backoff blog's OCC experiment ("Exponential Backoff
 * And Jitter", Marc Brooker, 2015) in the simulator (the blog's sweep of 10 to 190 clients,
 * 100 runs per figure) and with the real programs (./server -workload occ with the blog's
 * network delay added, ./client -workload occ), and, when given the path of the blog's own
 * simulator (backoff_simulator.py of github.com/aws-samples/aws-arch-backoff-simulator, not
 * part of this project), its figures beside ours, run by python3 under a shim of our own.
 *
 *   node --import ./src/register-tsx.mjs scripts/occ-record.ts [-blog-simulator PATH] [-out docs/occ-summary.json]
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseOccLine, type OccLine } from "../src/contracts/occ-line.ts";
import { ChildProgram } from "../src/runtime/child-program.ts";
import { provenance } from "../src/runtime/provenance.ts";
import { simulateOcc } from "../src/runner/occ.ts";
import { BLOG_BASE_MS, BLOG_CAP_MS, BLOG_RUNS } from "../src/strategies/blog-backoff.ts";
import { BLOG_NETWORK } from "../src/model/occ/network-delay.ts";

const ROOT = resolve(import.meta.dirname, "..");
const SEED = 1;
const TRIALS = 100;
const AT_CLIENTS = 100;
const SIM_SWEEP = Array.from({ length: 19 }, (_, index) => 10 * (index + 1));
const REAL_SWEEP = [10, 50, 100];
const REFERENCE_SWEEP = [10, 50, 100, 190];

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const out = resolve(ROOT, option("-out") ?? "docs/occ-summary.json");
const blogSimulator = option("-blog-simulator");
const say = (text: string) => process.stderr.write(`occ-record: ${text}\n`);
const started = performance.now();
const recordedBy = provenance();

say(`simulator: ${SIM_SWEEP.length} client counts x ${BLOG_RUNS.length} strategies x ${TRIALS} runs`);
const sim = simulateOcc({
  runs: BLOG_RUNS,
  counts: SIM_SWEEP,
  settings: { baseMs: BLOG_BASE_MS, capMs: BLOG_CAP_MS, network: BLOG_NETWORK, trials: TRIALS, seed: SEED },
});

/** One real run per strategy and client count, each on a fresh server (version 0). */
async function realRun(clients: number, strategy: string): Promise<OccLine> {
  const delay = ["-net-delay", `${BLOG_NETWORK.meanMs}ms`, "-net-delay-sd", `${BLOG_NETWORK.sdMs}ms`];
  const server = new ChildProgram("server", resolve(ROOT, "server"), [
    "-workload",
    "occ",
    "-listen",
    "127.0.0.1:0",
    ...delay,
    "-seed",
    String(SEED),
  ]);
  try {
    const line = await server.waitForLine(/listening on http:\/\/127\.0\.0\.1:\d+\/row/, { stream: "stderr", timeoutMs: 60_000 });
    const url = `http://127.0.0.1:${/:(\d+)\/row/.exec(line)![1]}/row`;
    const client = new ChildProgram("client", resolve(ROOT, "client"), [
      ...["-workload", "occ", "-url", url, "-clients", String(clients), "-strategy", strategy, "-seed", String(SEED), "-json"],
    ]);
    const code = await client.exited;
    const json = client.stdout.find((received) => received.text.startsWith("{"));
    if (code !== 0 || json === undefined) throw new Error(`client ${strategy} at ${clients} clients exited ${code}: ${client.said()}`);
    return parseOccLine(json.text, { file: "client stdout", line: 1 });
  } finally {
    server.kill();
    await server.exited;
  }
}

const real: OccLine[] = [];
for (const clients of REAL_SWEEP) {
  for (const run of BLOG_RUNS) {
    say(`real programs: ${run.name} at ${clients} clients`);
    real.push(await realRun(clients, run.name));
  }
}

/** Runs the blog's own simulator: its classes and loop, our client counts and seed; prints one JSON line per figure. */
const SHIM = `
import builtins, json, os, random, sys
builtins.xrange = range  # the simulator is Python 2
path, counts, seed = sys.argv[1], [int(n) for n in sys.argv[2].split(",")], int(sys.argv[3])
source = open(path).read().replace("\\nrun()", "\\n")  # define, do not run its own sweep
blog = {"__name__": "backoff_simulator"}
exec(compile(source, path, "exec"), blog)
random.seed(seed)
with open(os.devnull, "w") as ts_f:
    for clients in counts:
        for cls, name in blog["backoff_types"]:
            stats, tm = blog["Stats"](), 0
            for t in range(100):
                queue, stats = blog["setup_sim"](clients, cls, ts_f, stats)
                tm += blog["run_sim"](queue)
            print(json.dumps({"clients": clients, "blogName": name, "writes": stats.calls / 100, "completionMs": tm / 100}), flush=True)
`;

let reference: unknown = null;
if (blogSimulator !== undefined) {
  say(`the blog's simulator (${blogSimulator}) at ${REFERENCE_SWEEP.join(", ")} clients`);
  const text = execFileSync("python3", ["-c", SHIM, blogSimulator, REFERENCE_SWEEP.join(","), String(SEED)], { encoding: "utf8" });
  reference = {
    simulator: "github.com/aws-samples/aws-arch-backoff-simulator, src/backoff_simulator.py (commit 66cb169), run by python3 under a shim",
    python: execFileSync("python3", ["--version"], { encoding: "utf8" }).trim(),
    seed: SEED,
    runs: 100,
    figures: text
      .trim()
      .split("\n")
      .map((line) => {
        const figure = JSON.parse(line) as { clients: number; blogName: string; writes: number; completionMs: number };
        return { ...figure, strategy: BLOG_RUNS.find((run) => run.blogName === figure.blogName)!.name };
      }),
  };
}

const summary = {
  what: 'AWS Architecture Blog, "Exponential Backoff And Jitter" (Marc Brooker, 2015): N clients each updating one row once under optimistic concurrency',
  source: "https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/",
  command: `node --import ./src/register-tsx.mjs scripts/occ-record.ts ${args.join(" ")}`.trim(),
  seed: SEED,
  provenance: recordedBy,
  wallS: Number(((performance.now() - started) / 1000).toFixed(1)),
  note: "recorded on a shared 2-core machine while other work ran: the real programs' times include the client's own lag (timersLateMs)",
  model: { baseMs: BLOG_BASE_MS, capMs: BLOG_CAP_MS, network: BLOG_NETWORK, trials: TRIALS },
  atClients: AT_CLIENTS,
  sim: sim.map(({ runsWithGiveUps: _, ...figure }) => figure),
  real,
  reference,
};
writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
say(`wrote ${out} in ${summary.wallS} s`);
