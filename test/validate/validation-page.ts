import type { Provenance } from "../../src/report/summary-file.ts";
import type { ExampleValidation } from "./examples-catalog.ts";

/** docs/validation.md from the validation's results file. */
export function validationPage(record: { readonly provenance: Provenance; readonly examples: readonly ExampleValidation[] }): string {
  const { commit, machine, date } = record.provenance;
  const lines = [
    "# Validation: the field's published results, reproduced",
    "",
    "Each example of `examples/` is a scenario file naming its source and its published outcome. `npm run validate`",
    "runs each in the simulator and writes this page and `docs/validation-results.json`. Where the original",
    "simulator is public and ran here, its figure stands beside ours (its code is not part of this repository).",
    "Ratio: ours / theirs, or ours / published where only that is a number. One example by itself:",
    "`./sim examples/04-brooker-collapse.yaml` (any flag beside the file overrides it).",
    "",
    `Recorded at commit \`${commit}\` on ${machine}, ${date}.`,
    "",
    "**On the real programs.** Examples 01 and 04 also run on the real `./server` and `./client` here, scaled down",
    "in time (their rows say how), with the simulator on the same flags beside them; example 02's real runs are in",
    "`docs/occ.md`; `test/validate/fault-agreement.test.ts` compares the simulator with the real programs on every",
    "server model and fault kind. The others run in the simulator only, for the time or the rate they need on two",
    "shared cores: 05 holds an hour for its p99; 06 two runs of 150 s at 2 200 users; 03 twelve policies and failure",
    "rates plus the client-count runs; 07 reads 100 ms windows of 1 000 requests a second, where the real client's own",
    "lateness would be of the windows' order; 08 to 11 reproduce a simulator's examples, whose figures exist only there.",
    "",
  ];
  for (const example of record.examples) {
    lines.push(
      `## ${example.name}`,
      "",
      `\`examples/${example.file}\`, seed ${example.seed}. Source: [${example.source.title}](${example.source.url}).`,
      "",
      `Published: ${example.published}`,
      "",
      "| quantity | published | theirs | ours | ratio |",
      "| --- | --- | --- | --- | --- |",
    );
    for (const row of example.rows) {
      const reference = row.theirs ?? Number.parseFloat(row.published);
      const ratio = Number.isFinite(reference) && reference !== 0 && !Number.isNaN(row.ours) ? (row.ours / reference).toFixed(3) : "—";
      lines.push(
        `| ${row.quantity} | ${row.published} | ${row.theirs === undefined ? "—" : figure(row.theirs)} | ${figure(row.ours)} | ${ratio} |`,
      );
    }
    if (example.notes.length > 0) lines.push("", ...example.notes.map((note) => `- ${note}`));
    lines.push("");
  }
  return lines.join("\n");
}

/** A figure for the table; NaN is a quantity the run could not judge. */
function figure(value: number): string {
  if (Number.isNaN(value)) return "—";
  return Number.isInteger(value) ? String(value) : value.toFixed(4);
}
