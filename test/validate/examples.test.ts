import { mkdirSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { format, resolveConfig } from "prettier";
import { afterAll, describe, it } from "vitest";
import { provenance } from "../../src/runtime/provenance.ts";
import { EXAMPLE_VALIDATIONS, type ExampleValidation } from "./examples-catalog.ts";
import { validationPage } from "./validation-page.ts";

/*
 * `npm run validate`: every example of examples/ in the simulator, its published figure,
 * the original simulator's where it was run, ours, and the ratio; written to
 * docs/validation.md and its results file docs/validation-results.json (commit, seed, machine).
 */

const ROOT = resolve(import.meta.dirname, "../..");
const results: ExampleValidation[] = [];

describe("examples reproduce their published outcome", () => {
  for (const [file, validate] of EXAMPLE_VALIDATIONS) {
    it(file, async () => {
      results.push(await validate());
    });
  }

  afterAll(async () => {
    if (results.length !== EXAMPLE_VALIDATIONS.length) return;
    const record = { provenance: provenance(), examples: results };
    mkdirSync(resolve(ROOT, "docs"), { recursive: true });
    // Written as the repository's Prettier would, so that the committed files pass `npm run lint` as they come.
    const write = async (file: string, text: string, parser: string) => {
      const path = resolve(ROOT, file);
      writeFileSync(path, await format(text, { ...(await resolveConfig(path)), parser }));
    };
    await write("docs/validation-results.json", JSON.stringify(record), "json");
    await write("docs/validation.md", validationPage(record), "markdown");
  });
});
