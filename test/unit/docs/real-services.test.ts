import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type RealServicesFile, realServicesTable } from "../../helpers/real-services-table.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const read = (file: string) => readFileSync(resolve(ROOT, file), "utf8");

interface RecordedFile extends RealServicesFile {
  readonly services: (RealServicesFile["services"][number] & { readonly pastSaturation: readonly string[] })[];
}

describe("docs/real-services.md and docs/probe.md quote docs/real-services.json", () => {
  const file = JSON.parse(read("docs/real-services.json")) as RecordedFile;

  it("the page's table is the file's, row by row", () => {
    // Cell by cell: the page's columns are padded to line up, the separator's dashes with them.
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
    expect(cells(read("docs/real-services.md"))).toEqual(cells(realServicesTable(file)));
  });

  it("the probe's page shows gunicorn-sync's lines past saturation as the file has them", () => {
    const block = /```text\n(overload: [\s\S]*?)```/.exec(read("docs/probe.md"))?.[1];
    const sync = file.services.find((service) => service.name === "gunicorn-sync")!;
    expect(block?.trimEnd().split("\n")).toEqual(sync.pastSaturation.filter((line) => !line.startsWith("past saturation")));
  });
});
