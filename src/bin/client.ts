// Entry of ./client (through scripts/launch.sh); the program itself is src/client/main.ts.
import { runProgram } from "../runtime/run-program.ts";
import { main } from "../client/main.ts";

runProgram("client", main);
