/** Milliseconds as seconds: what charts and reports put on their time axes. */
export const seconds = (ms: number): number => ms / 1000;

/** Milliseconds as text in seconds to a tenth: `2.6 s`. */
export const secondsText = (ms: number): string => `${seconds(ms).toFixed(1)} s`;
