// Entry of ./server (through scripts/launch.sh); the program itself is src/server/main.ts.
import { runProgram } from "../runtime/run-program.ts";
import { main } from "../server/main.ts";

runProgram("server", main);
