import { createRequire } from "node:module";

const requireHere = createRequire(import.meta.url);

/**
 * A CommonJS dependency loaded when it is first used, not when the program starts: a program
 * that never needs it never holds it. `./server` needs undici only as a middle tier and
 * prom-client only with -metrics; loaded at start they held 13 MB of its 74 MB at rest
 * (docs/server.md, "Memory").
 */
export function onFirstUse<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireHere(name) as T);
}
