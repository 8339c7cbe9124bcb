// A worker thread of choose: measures one candidate with one seed per job (src/choose/measure.ts).
import { measure } from "./measure.ts";
import { serveJobs } from "./worker-pool.ts";

serveJobs(measure, (result) => [result.everyday.latenciesMs.buffer as ArrayBuffer]);
