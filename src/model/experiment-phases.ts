/**
 * The crash experiment's phases by default, in one place for the demo that runs it, the
 * simulator that simulates it and choose that measures it: steady state (the warm-up),
 * the outage (SIGSTOP to SIGCONT), and the observation after the resume.
 */
export const DEFAULT_PHASES = {
  steadyMs: 15_000,
  outageMs: 20_000,
  observeMs: 90_000,
} as const;

/** The whole default experiment: steady state, outage and observation. */
export const DEFAULT_EXPERIMENT_MS = DEFAULT_PHASES.steadyMs + DEFAULT_PHASES.outageMs + DEFAULT_PHASES.observeMs;
