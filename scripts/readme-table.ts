/**
 * `node --import ./src/register-tsx.mjs scripts/readme-table.ts docs/<file>.json`: prints the
 * comparison table of a summary.json (written by `npm run demo` or `./sim -out`) as Markdown,
 * for the README. Put `<!-- figures: docs/<file>.json -->` on the line above it: a test
 * checks that the table still says what the file says.
 */
import { readFileSync } from "node:fs";
import { markdownComparison } from "../src/report/readme-table.ts";

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write("usage: scripts/readme-table.ts docs/<summary>.json\n");
  process.exit(2);
}
process.stdout.write(`<!-- figures: ${file} -->\n${markdownComparison(readFileSync(file, "utf8"))}\n`);
