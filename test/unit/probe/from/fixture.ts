import { readFileSync } from "node:fs";
import { resolve } from "node:path";

/** A file of test/fixtures/load-tests/ (its README says how each was made). */
export const loadTestFixture = (name: string) => readFileSync(resolve(import.meta.dirname, "../../../fixtures/load-tests", name), "utf8");
