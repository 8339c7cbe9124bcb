import { parseDuration } from "./duration.ts";
import { type Fault, FAULT_KINDS, FaultSyntaxError, parseFaults } from "../model/faults/fault-schedule.ts";

/** The -faults flag of ./sim and the demo: one reader and one check, with Go durations. */
export const readFaults = (text: string): Fault[] => parseFaults(text, parseDuration);

export const faultsProblem = (text: string): string | undefined => {
  try {
    readFaults(text);
    return undefined;
  } catch (error) {
    if (error instanceof FaultSyntaxError) return error.message;
    throw error;
  }
};

/** What the kinds mean, for both programs' help. */
export const FAULTS_HELP =
  `fault schedule, kind@start+length[*factor] separated by commas, e.g. "stop@15s+20s, spike@60s+5s*2"; kinds ${FAULT_KINDS.join(", ")} ` +
  "(stop: SIGSTOP; crash: lost work, refused connections; capacity *f: threads or limit; slow *f: service time or delay; " +
  "errors *p: share answered 500; spike *f: the clients' load)";
