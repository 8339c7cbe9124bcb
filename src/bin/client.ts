// Entry of ./client (through scripts/launch.sh); the program itself is src/client/main.ts.
import { runProgram } from "../runtime/run-program.ts";
import { main } from "../client/main.ts";
import { keepHeapNearLive } from "../client/heap-growth.ts";

keepHeapNearLive();
runProgram("client", main);
