// Entry of `thundering-herd merge` (and ./merge); the program itself is src/merge/main.ts.
import { runProgram } from "../runtime/run-program.ts";
import { main } from "../merge/main.ts";

runProgram("merge", main);
