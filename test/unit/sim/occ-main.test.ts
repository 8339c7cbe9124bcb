import { describe, expect, it } from "vitest";
import { parseOccLine } from "../../../src/contracts/occ-line.ts";
import { main } from "../../../src/sim/main.ts";
import { parseClientCounts } from "../../../src/options/occ.ts";
import { capturedIo } from "../../helpers/captured-io.ts";

async function runSim(args: readonly string[]): Promise<{ code: unknown; stdout: string; stderr: string }> {
  const { io, stdout, stderr } = capturedIo();
  const code = await main(args, io);
  return { code, stdout: stdout(), stderr: stderr() };
}

describe("sim -workload occ", () => {
  it("reads client counts as a list, a range or the blog's sweep", () => {
    expect(parseClientCounts("5, 7")).toEqual([5, 7]);
    expect(parseClientCounts("10:40:15")).toEqual([10, 25, 40]);
    expect(parseClientCounts("blog")).toEqual(Array.from({ length: 19 }, (_, index) => 10 * (index + 1)));
    for (const bad of ["", "0", "3:1:1", "1:5:0", "ten"]) expect(() => parseClientCounts(bad), bad).toThrow(/-sweep-clients/);
  });

  it("prints a table per figure over a sweep, clients down and strategies across", async () => {
    const { code, stdout, stderr } = await runSim([
      "-workload",
      "occ",
      "-sweep-clients",
      "10,20",
      "-trials",
      "3",
      "-strategies",
      "none,full-jitter",
    ]);
    expect(code).toBe(0);
    expect(stderr).toMatch(/^sim: workload occ: 10, 20 clients; base 5ms, cap 2s; network \|normal\(10ms, 2ms\)\| each way; 3 runs/);
    expect(stdout).toMatch(/^work: writes tried/m);
    expect(stdout).toMatch(/^completion: time until every client's write landed/m);
    expect(stdout).toMatch(/^clients +none +full-jitter$/m);
    expect(stdout.match(/^20 +\d+ +\d+$/gm)).toHaveLength(2);
  });

  it("prints one JSON line per strategy by the line contract, the same for the same seed", async () => {
    const args = ["-workload", "occ", "-clients", "15", "-trials", "2", "-json"];
    const { code, stdout } = await runSim(args);
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split("\n")
      .map((line, index) => parseOccLine(line, { file: "sim", line: index + 1 }));
    expect(lines.map((line) => line.strategy)).toEqual(["none", "exponential", "full-jitter", "equal-jitter", "decorrelated-jitter"]);
    for (const line of lines) expect(line).toMatchObject({ source: "sim", clients: 15, trials: 2, landed: 15, seed: 1 });
    expect((await runSim(args)).stdout).toBe(stdout);
  });
});
