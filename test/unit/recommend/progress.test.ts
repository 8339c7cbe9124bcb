import { describe, expect, it } from "vitest";
import { progress } from "../../../src/recommend/progress.ts";

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
    let nowMs = 0;
    const bar = progress(plain, "choose: simulating", 1000, () => nowMs);
    for (let done = 0; done <= 1000; done++, nowMs += 10) bar.update(done);
    bar.finish();
    expect(writes).toHaveLength(11);
    expect(writes[0]).toBe("choose: simulating: 0/1000 (0 %)\n");
    expect(writes[5]).toBe("choose: simulating: 500/1000 (50 %), about 5 s left\n");
    expect(writes.at(-1)).toBe("choose: simulating: 1000/1000 (100 %)\n");
  });

  it("says how long is left at the pace so far, on a line and on a bar", () => {
    let nowMs = 0;
    const now = () => nowMs;
    const { writes, stream: plain } = stream(false);
    const lines = progress(plain, "choose: simulating", 100, now);
    const { writes: barWrites, stream: tty } = stream(true);
    const bar = progress(tty, "choose: simulating", 100, now);
    for (let done = 0; done <= 100; done++) {
      lines.update(done);
      bar.update(done);
      // Each job takes 20 ms for the first half, then 60 ms: the estimate follows the pace so far.
      nowMs += done < 50 ? 20 : 60;
    }
    expect(writes[0]).toBe("choose: simulating: 0/100 (0 %)\n");
    expect(writes[5]).toBe("choose: simulating: 50/100 (50 %), about 1 s left\n");
    expect(writes[9]).toBe("choose: simulating: 90/100 (90 %), about 1 s left\n");
    expect(writes.at(-1)).toBe("choose: simulating: 100/100 (100 %)\n");
    expect(barWrites[50]).toContain("] 50/100, about 1 s left");
    expect(barWrites[100]).not.toContain("left");
  });
});
