/**
 * Records a `thundering-herd choose` run for docs/choose.md: runs choose with the arguments given
 * after the output file (and -json), and writes its result with how it was recorded (commit,
 * command, first seed, machine, wall time) to that file. Then prints docs/choose.md's table and
 * first line for it.
 *
 *   node --import ./src/register-tsx.mjs scripts/choose-record.ts docs/choose-article.json -parallel 2
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { programJson } from "../harness/program-json.ts";
import { main } from "../src/choose/main.ts";
import { chooseHeadline, markdownChoose } from "../src/choose/readme-table.ts";

const [file, ...args] = process.argv.slice(2);
if (file === undefined || !file.endsWith(".json")) {
  process.stderr.write("usage: scripts/choose-record.ts docs/<name>.json [choose flags]\n");
  process.exit(2);
}
const git = (...gitArgs: string[]) => execFileSync("git", gitArgs, { encoding: "utf8" }).trim();
// The code that runs is the code at the start.
const commit = git("rev-parse", "HEAD");
// Results files that validate rewrites one after another are not the code that runs.
const uncommittedChanges = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs/*.json") !== "";
const started = performance.now();
const result = await programJson(main, args, "choose-record-");
const wallS = (performance.now() - started) / 1000;
const seedIndex = args.indexOf("-seed");
const recorded = {
  commit,
  uncommittedChanges,
  command: ["npm run choose --", ...args].join(" "),
  seed: seedIndex >= 0 ? Number(args[seedIndex + 1]) : 1,
  machine: { cpu: cpus()[0]?.model ?? "unknown", cores: cpus().length, memoryBytes: totalmem(), node: process.version },
  wallS: Number(wallS.toFixed(1)),
  note: "recorded on a shared 2-core machine while other work ran: the wall time is not a benchmark; the figures depend only on the flags and the seed",
};
writeFileSync(file, `${JSON.stringify({ recorded, result }, null, 2)}\n`);
const text = JSON.stringify({ recorded, result });
process.stdout.write(`${file} (${wallS.toFixed(0)} s)\n\n> ${chooseHeadline(text)}\n\n${markdownChoose(text)}\n`);
