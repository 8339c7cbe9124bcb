// Entry of `npm run demo`; the program itself is src/demo/main.ts.
import { runProgram } from "../runtime/run-program.ts";
import { main } from "../demo/main.ts";

runProgram("demo", main);
