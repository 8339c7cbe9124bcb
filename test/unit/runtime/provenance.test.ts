import { execFileSync } from "node:child_process";
import { cpus } from "node:os";
import { describe, expect, it } from "vitest";
import { provenance } from "../../../src/runtime/provenance.ts";

describe("provenance", () => {
  it("names this checkout's commit, the package's version, the machine, Node and the instant", () => {
    const head = execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    const made = provenance(new Date(Date.UTC(2026, 10, 23, 12)));
    expect(made.commit).toMatch(new RegExp(`^${head}(\\+dirty)?$`));
    expect(made.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(made.machine).toContain(`${cpus().length} x `);
    expect(made.machine).toMatch(/\d+ GiB, linux /);
    expect(made.node).toBe(process.version);
    expect(made.date).toBe("2026-11-23T12:00:00.000Z");
  });
});
