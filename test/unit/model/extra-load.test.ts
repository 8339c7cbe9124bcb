import { describe, expect, it } from "vitest";
import { addExtraLoad } from "../../../src/model/extra-load.ts";
import type { ClientWindow } from "../../../src/model/timeline.ts";

const window = (startMs: number, endMs: number, perSec: number, behind?: string): ClientWindow => ({
  startMs,
  endMs,
  okPerSec: perSec,
  errorsPerSec: perSec / 10,
  timedoutPerSec: 0,
  attemptsPerSec: perSec,
  retriesPerSec: 0,
  ...(behind === undefined ? {} : { behind }),
});

describe("a spike's extra clients added into the herd's timeline", () => {
  it("spreads each extra window's counts over the herd's windows by overlap, keeping every request once", () => {
    const herd = [window(0, 1000, 100), window(1000, 2000, 100), window(2000, 3000, 100)];
    // 1.5 s at 40/s from 500 ms: 20 requests in the first window, 40 in the second, none in the third.
    const summed = addExtraLoad(herd, [window(500, 2000, 40)]);
    expect(summed.map((one) => one.okPerSec)).toEqual([120, 140, 100]);
    expect(summed.map((one) => one.attemptsPerSec)).toEqual([120, 140, 100]);
    expect(summed.map((one) => one.errorsPerSec)).toEqual([12, 14, 10]);
    const total = (windows: readonly ClientWindow[]) =>
      windows.reduce((sum, one) => sum + (one.okPerSec * (one.endMs - one.startMs)) / 1000, 0);
    expect(total(summed)).toBe(total(herd) + 60);
    expect(summed[2]).toBe(herd[2]);
  });

  it("marks a herd's window behind where the spike's client fell behind", () => {
    const [first] = addExtraLoad([window(0, 1000, 100)], [window(0, 1000, 10, "lateness p99 300ms")]);
    expect(first?.behind).toBe("the spike's client: lateness p99 300ms");
    expect(addExtraLoad([window(0, 1000, 100, "own")], [window(0, 1000, 10, "spike")])[0]?.behind).toBe("own");
  });
});
