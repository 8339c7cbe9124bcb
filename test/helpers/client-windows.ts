import type { ClientWindow } from "../../src/model/timeline.ts";

/** Five-second client windows from 0, each [ok, timed out] per second, no errors: a verdict's input by hand. */
export function fiveSecondWindows(values: readonly (readonly [number, number])[]): ClientWindow[] {
  return values.map(([ok, timedout], index) => ({
    startMs: index * 5_000,
    endMs: (index + 1) * 5_000,
    okPerSec: ok,
    errorsPerSec: 0,
    timedoutPerSec: timedout,
    attemptsPerSec: ok + timedout,
  }));
}
