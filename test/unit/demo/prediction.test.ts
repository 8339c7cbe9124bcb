import { describe, expect, it } from "vitest";
import { predicted } from "../../../src/demo/prediction.ts";
import { parseStrategies } from "../../../src/strategies/runs.ts";

/*
 * The simulator's run beside a demo -target run: the same scenario on the model of its server
 * flags. The two models the probe writes for gunicorn's 4 sync workers, as it comes and with
 * --backlog 16, predict a collapse and a recovery under fixed retry after a 4 s stop.
 */
const RUN = {
  clientArgs: ["-clients", "200", "-lambda", "5", "-timeout", "1s", "-interval", "1s"],
  steadyMs: 3_000,
  outageMs: 4_000,
  observeMs: 6_000,
  faults: undefined,
  troubleMs: 7_000,
  seed: 3,
};
const FIXED = parseStrategies("fixed")[0]!;
const QUEUE = ["-model", "queue", "-threads", "4", "-service-time", "50ms"];

describe("the simulator's prediction for a target", () => {
  it("runs the same scenario on the server flags' model: a collapse with an unbounded queue, a recovery with the excess dropped", () => {
    const asItComes = predicted({ ...RUN, serverArgs: QUEUE }, FIXED);
    const smallBacklog = predicted({ ...RUN, serverArgs: [...QUEUE, "-queue-limit", "17", "-shed-with", "drop", "-backlog", "17"] }, FIXED);
    expect("result" in asItComes && asItComes.result.metrics.verdict).toBe("collapsed");
    expect("result" in smallBacklog && smallBacklog.result.metrics.verdict).toBe("recovered");
    expect("result" in smallBacklog && smallBacklog.result.phases).toMatchObject({ stopAtMs: 3_000, resumeAtMs: 7_000, endMs: 13_000 });
  });

  it("says why where the simulator cannot run the users' flags, rather than predicting something else", () => {
    const prediction = predicted({ ...RUN, serverArgs: QUEUE, clientArgs: [...RUN.clientArgs, "-workers", "2"] }, FIXED);
    expect(prediction).toEqual({ why: expect.stringMatching(/-workers/) });
  });
});
