/**
 * A small crash scenario for the simulator in end-to-end tests: 300 users, a 500 ms timeout,
 * a 4 s outage at 6 s, 24 s in all. Runs in well under a second.
 */
export const SMALL_SIM_SCENARIO: readonly string[] = [
  ...["-clients", "300", "-lambda", "3", "-timeout", "500ms", "-interval", "2s"],
  ...["-outage-at", "6s", "-outage", "4s", "-duration", "24s"],
];
