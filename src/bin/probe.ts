// Entry of `thundering-herd probe` (and npm run probe); the program itself is src/probe/main.ts.
import { runProgram } from "../runtime/run-program.ts";
import { main } from "../probe/main.ts";

runProgram("probe", main);
