// A worker thread's first module when the programs run from their TypeScript sources (tsx,
// vitest): Node 20 does not give workers the main thread's module hooks, so the worker
// registers tsx itself, then imports the real entry (src/bin/worker-entry.ts).
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.entry);
