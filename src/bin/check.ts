// Entry of `npm run check-config`; the program itself is src/check/main.ts, given probe for -from.
import { main } from "../check/main.ts";
import { main as probe } from "../probe/main.ts";
import { runProgram } from "../runtime/run-program.ts";

runProgram("check", (argv, io) => main(argv, io, { probe }));
