// Entry of ./sim (through scripts/launch.sh); the program itself is src/sim/main.ts.
import { runProgram } from "../runtime/run-program.ts";
import { main } from "../sim/main.ts";

runProgram("sim", main);
