import { describe, expect, it } from "vitest";
import { progress } from "../../../src/choose/progress.ts";

function stream(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 80, write: (text: string) => writes.push(text) } };
}

describe("progress", () => {
  it("rewrites one bar in place on a terminal, and clears it at the end", () => {
    const { writes, stream: tty } = stream(true);
    const bar = progress(tty, "choose: simulating", 40);
    for (let done = 0; done <= 40; done++) bar.update(done);
    bar.finish();
    expect(writes).toHaveLength(42);
    expect(writes.every((text) => text.startsWith("\r\x1b[K") && !text.includes("\n"))).toBe(true);
    expect(writes[20]!.startsWith("\r\x1b[Kchoose: simulating [###############...............] 20/40")).toBe(true);
    expect(writes[40]).toMatch(/\[#{30}\] 40\/40/);
    expect(writes.at(-1)).toBe("\r\x1b[K");
    for (const text of writes) expect(text.length).toBeLessThanOrEqual(80 + 4);
  });

  it("prints plain lines elsewhere, one per tenth of the work", () => {
    const { writes, stream: plain } = stream(false);
    const bar = progress(plain, "choose: simulating", 1000);
    for (let done = 0; done <= 1000; done++) bar.update(done);
    bar.finish();
    expect(writes).toHaveLength(11);
    expect(writes[0]).toBe("choose: simulating: 0/1000 (0 %)\n");
    expect(writes[5]).toBe("choose: simulating: 500/1000 (50 %)\n");
    expect(writes.at(-1)).toBe("choose: simulating: 1000/1000 (100 %)\n");
  });
});
