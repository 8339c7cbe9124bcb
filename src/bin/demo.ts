// Entry of `npm run demo`; the program itself is src/scenario/main.ts.
import { runProgram } from "../runtime/run-program.ts";
import { main } from "../scenario/main.ts";

runProgram("demo", main);
