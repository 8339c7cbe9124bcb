import { CHOOSE_TARGET } from "../options/choose.ts";
import { DEMO_TARGET } from "../options/demo.ts";
import { OCC_SIM_TARGET } from "../options/occ.ts";
import { SIM_TARGET } from "../options/sim.ts";
import type { ScenarioTarget } from "../options/scenario-target.ts";

/**
 * Every program that reads scenario files. One file may be given to any of them: a key that
 * another takes and this one does not is passed over with a note, not refused. A file's keys are
 * those of the targets of its workload.
 */
export const SCENARIO_TARGETS: readonly ScenarioTarget[] = [SIM_TARGET, DEMO_TARGET, CHOOSE_TARGET, OCC_SIM_TARGET];
