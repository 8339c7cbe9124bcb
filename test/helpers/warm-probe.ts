import type { WarmableOwner } from "../../src/clock/clock.ts";

const ROWS = new Float64Array(1);

/**
 * What an owner or a server's client needs for warmOwner to read a row of its own, with
 * `onRead` called at each such read: what the code under test reads ahead.
 */
export function warmProbe(onRead: () => void): Required<WarmableOwner> {
  return {
    index: 0,
    context: {
      get warmRows() {
        onRead();
        return ROWS;
      },
      warmRowStride: 1,
    },
  };
}
