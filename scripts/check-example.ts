/**
 * Records the README's and docs/check.md's example of `thundering-herd check`: the gRPC service
 * config of examples/check graded on examples/check/orders-service.yaml (seeded: the same commit
 * gives the same figures), with how it was recorded (commit, date, command, seed, machine).
 *
 *   node --import ./src/register-tsx.mjs scripts/check-example.ts docs/check-example.json
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { programJson } from "../harness/program-json.ts";
import { main } from "../src/check/main.ts";

const ARGS = ["examples/check/grpc-service-config.json", "examples/check/orders-service.yaml"];

const [file] = process.argv.slice(2);
if (file === undefined || !file.endsWith(".json")) {
  process.stderr.write("usage: scripts/check-example.ts docs/<name>.json\n");
  process.exit(2);
}
const git = (...gitArgs: string[]) => execFileSync("git", gitArgs, { encoding: "utf8" }).trim();
const result = await programJson(main, [...ARGS], "check-example-");
const provenance = {
  commit: git("rev-parse", "HEAD"),
  date: new Date().toISOString(),
  command: `npx thundering-herd check ${ARGS.join(" ")}`,
  seed: (result.settings as { seeds: number[] }).seeds[0],
  machine: { cpu: cpus()[0]?.model ?? "unknown", cores: cpus().length, memoryBytes: totalmem(), node: process.version },
};
writeFileSync(file, `${JSON.stringify({ provenance, result }, null, 2)}\n`);
process.stdout.write(`${file}\n`);
