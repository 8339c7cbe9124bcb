import type { ClientWindow } from "./timeline.ts";

/**
 * The windows of a herd with those of extra clients that ran beside it for a while (a spike's
 * client processes) added in: each extra window's counts (rate × length) are spread over the
 * herd's windows in proportion to their overlap, so the sum keeps every request once. A
 * herd's window that overlaps an extra one in which that client fell behind is marked behind
 * too (its figures would be that client's own lag).
 */
export function addExtraLoad(herd: readonly ClientWindow[], extra: readonly ClientWindow[]): ClientWindow[] {
  return herd.map((window) => {
    const lengthS = (window.endMs - window.startMs) / 1000;
    if (lengthS <= 0) return window;
    let ok = 0;
    let errors = 0;
    let timedout = 0;
    let attempts = 0;
    let retries = 0;
    let behind = window.behind;
    for (const other of extra) {
      const overlapS = (Math.min(window.endMs, other.endMs) - Math.max(window.startMs, other.startMs)) / 1000;
      if (overlapS <= 0) continue;
      ok += other.okPerSec * overlapS;
      errors += other.errorsPerSec * overlapS;
      timedout += other.timedoutPerSec * overlapS;
      attempts += other.attemptsPerSec * overlapS;
      retries += (other.retriesPerSec ?? 0) * overlapS;
      if (other.behind !== undefined) behind ??= `the spike's client: ${other.behind}`;
    }
    if (attempts === 0 && ok === 0 && errors === 0 && timedout === 0 && behind === window.behind) return window;
    return {
      ...window,
      okPerSec: window.okPerSec + ok / lengthS,
      errorsPerSec: window.errorsPerSec + errors / lengthS,
      timedoutPerSec: window.timedoutPerSec + timedout / lengthS,
      attemptsPerSec: window.attemptsPerSec + attempts / lengthS,
      ...(window.retriesPerSec === undefined ? {} : { retriesPerSec: window.retriesPerSec + retries / lengthS }),
      ...(behind === undefined ? {} : { behind }),
    };
  });
}
