import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type RealServicesFile,
  realAgainstPredictedTable,
  realServicesChooseTable,
  realServicesReadmeTable,
  realServicesTable,
  type RepeatFile,
  repeatTable,
} from "../../helpers/real-services-table.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const read = (file: string) => readFileSync(resolve(ROOT, file), "utf8");

interface RecordedFile extends RealServicesFile {
  readonly services: (RealServicesFile["services"][number] & { readonly pastSaturation: readonly string[] })[];
}

describe("docs/real-services.md and docs/probe.md quote docs/real-services.json", () => {
  const file = JSON.parse(read("docs/real-services.json")) as RecordedFile;

  // Cell by cell: the tables' columns are padded to line up, the separator's dashes with them.
  const cells = (text: string) =>
    text
      .split("\n")
      .filter((line) => line.startsWith("|") && !/^\|[\s|-]+\|$/.test(line))
      .map((line) =>
        line
          .slice(1, -1)
          .split("|")
          .map((cell) => cell.trim()),
      );

  it("the page's tables are the file's, row by row: the probe's, each real run beside its prediction, the disagreements repeated, choose's order on the service", () => {
    const repeats = JSON.parse(read("docs/real-services-repeat.json")) as RepeatFile;
    const tables = [realServicesTable(file), realAgainstPredictedTable(file), repeatTable(repeats), realServicesChooseTable(file)];
    expect(cells(read("docs/real-services.md"))).toEqual(cells(tables.join("\n")));
  });

  it("the README's table, after its marker, is the file's", () => {
    const readme = read("README.md");
    const after = readme.slice(readme.indexOf("<!-- real-services: docs/real-services.json -->"));
    const table = /\n((?:\|.*\|\n)+)/.exec(after)?.[1] ?? "";
    expect(readme).toContain("<!-- real-services: docs/real-services.json -->");
    expect(cells(table)).toEqual(cells(realServicesReadmeTable(file)));
  });

  it("the probe's page shows gunicorn-sync's lines past saturation as the file has them", () => {
    const block = /```text\n(overload: [\s\S]*?)```/.exec(read("docs/probe.md"))?.[1];
    const sync = file.services.find((service) => service.name === "gunicorn-sync")!;
    expect(block?.trimEnd().split("\n")).toEqual(sync.pastSaturation.filter((line) => !line.startsWith("past saturation")));
  });
});
