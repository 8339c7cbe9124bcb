// Entry of `npm run choose`; the program itself is src/choose/main.ts.
import { main } from "../choose/main.ts";
import { runProgram } from "../runtime/run-program.ts";

runProgram("choose", main);
