// Every worker thread starts here (see src/runtime/worker-pool.ts for how it is found) and runs the
// module of its role: an entry, as the programs' are. Each role's module is loaded only in the workers that need it.
import { workerData } from "node:worker_threads";
import type { WorkerRole, WorkerStart } from "../runtime/worker-pool.ts";

const ROLES: Readonly<Record<WorkerRole, () => Promise<{ runWorker: (data: never) => unknown }>>> = {
  sim: () => import("../sim/sim-worker.ts"),
  "client-herd": () => import("../client/herd-worker.ts"),
  choose: () => import("../choose/measure-worker.ts"),
};

const start = workerData as WorkerStart;
const role = ROLES[start.role];
if (role === undefined) throw new Error(`unknown worker role "${String(start.role)}"`);
await (await role()).runWorker(start.data as never);
