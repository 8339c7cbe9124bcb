/**
 * Waits for a condition that an event will make true (a counter reached, a socket closed),
 * re-checking every few milliseconds. The time limit only bounds a hang: it is far beyond
 * what the event needs on any machine and never decides a result by itself.
 */
export async function eventually(condition: () => boolean | Promise<boolean>, what: string, limitMs = 30_000): Promise<void> {
  const deadline = performance.now() + limitMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`still waiting after ${limitMs} ms for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
