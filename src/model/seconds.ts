/** Milliseconds as seconds: what charts and reports put on their time axes. */
export const seconds = (ms: number): number => ms / 1000;

/** Milliseconds as text in seconds to a tenth: `2.6 s`. */
export const secondsText = (ms: number): string => `${seconds(ms).toFixed(1)} s`;

/** Milliseconds as a Go-style duration, as schedules write them: `250ms`, `15s`, `1.5s`, `1m30s`. */
export function durationText(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 1000) return `${Number(ms.toFixed(3))}ms`;
  const minutes = Math.floor(ms / 60_000);
  const rest = `${Number(((ms - minutes * 60_000) / 1000).toFixed(3))}s`;
  return minutes === 0 ? rest : `${minutes}m${rest}`;
}
