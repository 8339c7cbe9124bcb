// Entry of `npm run check-config`; the program itself is src/check/main.ts.
import { main } from "../check/main.ts";
import { runProgram } from "../runtime/run-program.ts";

runProgram("check", main);
