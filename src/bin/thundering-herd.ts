#!/usr/bin/env node
// The package's command: `thundering-herd server|client|sim|demo|choose|probe|check|merge [flags]`. Each program is
// loaded only when asked for, so the server does not load the demo's chart renderer.
import type { ProgramMain } from "../runtime/program-io.ts";
import { runProgram } from "../runtime/run-program.ts";

const PROGRAMS: Readonly<Record<string, { readonly summary: string; readonly load: () => Promise<{ main: ProgramMain }> }>> = {
  server: { summary: "the HTTP server whose latency explodes past a concurrency limit", load: () => import("../server/main.ts") },
  client: {
    summary: "a herd of simulated users that retry with a strategy",
    load: async () => {
      const [client, heap] = await Promise.all([import("../client/main.ts"), import("../client/heap-growth.ts")]);
      heap.keepHeapNearLive();
      return client;
    },
  },
  sim: { summary: "the same server and clients in virtual time", load: () => import("../sim/main.ts") },
  demo: { summary: "the crash experiment by itself, with a report", load: () => import("../demo/main.ts") },
  choose: { summary: "rank retry policies for your own system, in the simulator", load: () => import("../choose/main.ts") },
  probe: {
    summary: "measure your running HTTP service (or read your load tests), fit the server models, write its scenario",
    load: () => import("../probe/main.ts"),
  },
  check: {
    summary: "grade the retry configuration you run (gRPC, Envoy, Istio, AWS, resilience4j, Polly, cockatiel, p-retry) on your system",
    // Given probe's main for -from: one program never imports another (docs/design.md).
    load: async () => {
      const [check, probe] = await Promise.all([import("../check/main.ts"), import("../probe/main.ts")]);
      return { main: (argv, io) => check.main(argv, io, { probe: probe.main }) };
    },
  },
  merge: { summary: "combine the -json outputs of a sharded herd into one timeline", load: () => import("../merge/main.ts") },
};

/** The README's paths, one command each: what most people come for. */
const PATHS: readonly (readonly [string, string])[] = [
  ["see a storm", "thundering-herd demo -dashboard"],
  ["measure your service", "thundering-herd probe -out my-service.yaml http://127.0.0.1:8080/api"],
  ["  or your load tests", "thundering-herd probe -from run-1.json,run-2.json,run-4.json,run-8.json -out my-service.yaml"],
  ["choose its retry policy", "thundering-herd choose my-service.yaml"],
  ["grade the config you run", "thundering-herd check grpc-service-config.json my-service.yaml"],
  ["the crash, on that model", "thundering-herd demo my-service.yaml"],
  ["a chain of services", "thundering-herd choose node_modules/thundering-herd/examples/three-tiers.yaml"],
];

const usage =
  "Usage: thundering-herd <program> [flags]\n\nPaths:\n" +
  PATHS.map(([what, command]) => `  ${what.padEnd(26)}${command}\n`).join("") +
  "\nPrograms:\n" +
  Object.entries(PROGRAMS)
    .map(([name, program]) => `  ${name.padEnd(8)}${program.summary}\n`)
    .join("") +
  "\nRun 'thundering-herd <program> -h' for its flags.\n";

const [name, ...argv] = process.argv.slice(2);
const program = name === undefined ? undefined : PROGRAMS[name];
if (name === undefined || ["-h", "-help", "--help", "help"].includes(name)) {
  process.stdout.write(usage);
} else if (program === undefined) {
  process.stderr.write(`thundering-herd: unknown program "${name}"; one of ${Object.keys(PROGRAMS).join(", ")}\n${usage}`);
  process.exitCode = 2;
} else {
  const { main } = await program.load();
  runProgram(name, main, argv);
}
