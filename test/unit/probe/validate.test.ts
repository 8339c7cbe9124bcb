import { describe, expect, it } from "vitest";
import type { ModelFit } from "../../../src/probe/fit/fit-models.ts";
import type { StepMeasure } from "../../../src/probe/fit/step-measure.ts";
import { AGREEMENT_TOLERANCE, compare, type Measure, validationTable, validationVerdict } from "../../../src/probe/validate.ts";
import { capturedIo } from "../../helpers/captured-io.ts";

/** A queue of 4 threads × 50 ms with 2 ms outside it: 52 ms up to 4 users, then 12.5 ms a user; 80 req/s at most. */
const FIT: ModelFit = {
  spec: {
    kind: "queue",
    pool: { threads: 4, serviceTimeMs: 50, serviceDist: "constant", serviceSigma: 0.5, queueOrder: "fifo", queueLimit: Infinity },
  },
  overheadMs: 2,
  parameters: 3,
  latencyError: 0,
  throughputError: 0,
  meanSquare: 0,
  score: 0,
};

/** A step at `concurrency` whose mean latency is `latencyMs` (its throughput by Little's law). */
function step(concurrency: number, latencyMs: number): StepMeasure {
  const throughputPerSec = (concurrency * 1000) / latencyMs;
  return {
    concurrency,
    throughputPerSec,
    meanLatencyMs: latencyMs,
    p50Ms: latencyMs,
    p90Ms: latencyMs,
    p99Ms: latencyMs,
    requests: 100,
    errors: 0,
  };
}

const MEASURED = [step(1, 52), step(2, 52), step(4, 52), step(8, 100)];

describe("-validate's verdict", () => {
  it("agrees when ./server and the model are within the tolerance at every step, naming the largest difference", () => {
    const server = [step(1, 55), step(2, 56), step(4, 57), step(8, 104)];
    expect(AGREEMENT_TOLERANCE).toBe(0.15);
    expect(validationVerdict(FIT, MEASURED, server)).toBe(
      "validation: agrees: ./server and the model within 15 % of the measured at every step " +
        "(the most, ./server's mean latency at concurrency 4, 9.6 % off the measured)",
    );
  });

  it("disagrees when one column at one step is beyond it, naming which", () => {
    const server = [step(1, 55), step(2, 64), step(4, 57), step(8, 104)];
    expect(validationVerdict(FIT, MEASURED, server)).toBe(
      "validation: disagrees: ./server's mean latency at concurrency 2 is 23.1 % off the measured, beyond 15 %",
    );
  });

  it("disagrees when ./server has no step where the service had one, and the table shows a dash there", () => {
    const server = [step(1, 55), step(2, 56), step(4, 57)];
    expect(validationVerdict(FIT, MEASURED, server)).toBe("validation: disagrees: ./server has no step at concurrency 8");
    const lastRow = validationTable(FIT, MEASURED, server).split("\n").at(-1)!;
    expect(lastRow.trim().split(/ +/)).toEqual(["8", "80.0", "-", "80.0", "100.0", "-", "100.0"]);
  });
});

describe("-validate's measures again", () => {
  /** A side's scripted answers, one list of steps per call, and the concurrencies each call asked for. */
  function scripted(answers: Record<"service" | "server", StepMeasure[][]>) {
    const asked: string[] = [];
    const measure: Measure = async (side, concurrencies) => {
      asked.push(`${side} ${concurrencies.join(",")}`);
      const steps = answers[side].shift()!;
      // As a probe's run: a step it did not get to measure is not in it.
      return steps.filter((one) => concurrencies.includes(one.concurrency));
    };
    return { measure, asked };
  }

  async function compared(answers: Record<"service" | "server", StepMeasure[][]>, serviceAgain = true) {
    const { measure, asked } = scripted(answers);
    const { io, stdout, stderr } = capturedIo();
    const validation = await compare(FIT, MEASURED, measure, { serviceAgain, interrupt: new AbortController().signal }, io);
    return { validation, asked, stdout: stdout().trimEnd().split("\n"), stderr: stderr() };
  }

  it("measures a step beyond the tolerance twice more on both sides, and judges the median of its three measures", async () => {
    // ./server's step at 2 users was disturbed the first time (64 ms against 52 measured), and the service's the third.
    const { validation, asked, stdout, stderr } = await compared({
      service: [[step(2, 53)], [step(2, 70)]],
      server: [[step(1, 55), step(2, 64), step(4, 57), step(8, 104)], [step(2, 54)], [step(2, 55)]],
    });
    expect(asked).toEqual(["server 1,2,4,8", "service 2", "server 2", "service 2", "server 2"]);
    expect(stderr).toBe(
      "probe: -validate: ./server's mean latency at concurrency 2 23.1 % off the measured: measuring that step 2 more times on the service and on ./server, and judging the median of each figure\n",
    );
    // The medians: the service's 52, 53 and 70 ms at 2 users; ./server's 64, 54 and 55.
    expect(validation.measured.map((one) => one.meanLatencyMs)).toEqual([52, 53, 52, 100]);
    expect(validation.server.map((one) => one.meanLatencyMs)).toEqual([55, 55, 57, 104]);
    // Steps measured once are those measures themselves.
    expect(validation.measured[0]).toBe(MEASURED[0]);
    expect(
      stdout
        .find((line) => line.trim().startsWith("2 "))!
        .trim()
        .split(/ +/)[5],
    ).toBe("55.0");
    expect(stdout.at(-1)).toMatch(/^validation: agrees: /);
  });

  it("disagrees where the step is off in most of its measures, naming it", async () => {
    const { asked, stdout } = await compared({
      service: [[step(2, 52)], [step(2, 52)]],
      server: [[step(1, 55), step(2, 64), step(4, 57), step(8, 104)], [step(2, 53)], [step(2, 66)]],
    });
    expect(asked).toEqual(["server 1,2,4,8", "service 2", "server 2", "service 2", "server 2"]);
    expect(stdout.at(-1)).toBe("validation: disagrees: ./server's mean latency at concurrency 2 is 23.1 % off the measured, beyond 15 %");
  });

  it("adds a step ./server did not have the first time, measured again, and judges it", async () => {
    const { asked, validation, stdout } = await compared({
      service: [[step(8, 101)], [step(8, 99)]],
      server: [[step(1, 55), step(2, 56), step(4, 57)], [step(8, 104)], [step(8, 106)]],
    });
    expect(asked).toEqual(["server 1,2,4,8", "service 8", "server 8", "service 8", "server 8"]);
    expect(validation.server.map((one) => one.concurrency)).toEqual([1, 2, 4, 8]);
    // ./server's two measures at 8 users, fewer than three: the latest is judged.
    expect(validation.server.at(-1)!.meanLatencyMs).toBe(106);
    expect(stdout.at(-1)).toMatch(/^validation: agrees: /);
  });

  it("judges the service's latest measure where its limits left it fewer than three, and says so", async () => {
    // The service's limits ran out after its first measure again (a probe's run then has no steps).
    const { validation, stdout, stderr } = await compared({
      service: [[step(2, 57)], []],
      server: [[step(1, 55), step(2, 70), step(4, 57), step(8, 104)], [step(2, 62)], [step(2, 61)]],
    });
    // The service at 2 users: 52 (the first) then 57 ms, the latest judged (a mean, 54.5, would differ); ./server 70, 62 and 61, median 62.
    expect(validation.measured[1]!.meanLatencyMs).toBe(57);
    expect(validation.server[1]!.meanLatencyMs).toBe(62);
    expect(stderr.split("\n")[1]).toBe(
      "probe: -validate: the service at concurrency 2 measured fewer than 3 times (the probe's -max-requests or -max-time spent): judged by its latest measure",
    );
    expect(stdout.at(-1)).toMatch(/^validation: agrees: /);
  });

  it("measures the service no more where the probe's own limits are spent, and judges the first measures", async () => {
    const { asked, stderr, stdout } = await compared(
      { service: [], server: [[step(1, 55), step(2, 64), step(4, 57), step(8, 104)]] },
      false,
    );
    expect(asked).toEqual(["server 1,2,4,8"]);
    expect(stderr).toBe(
      "probe: -validate: ./server's mean latency at concurrency 2 23.1 % off the measured: not measured again, the probe's -max-requests or -max-time is spent\n",
    );
    expect(stdout.at(-1)).toBe("validation: disagrees: ./server's mean latency at concurrency 2 is 23.1 % off the measured, beyond 15 %");
  });

  it("disagrees on a figure that is no number, which no later column or step hides", async () => {
    const { stdout } = await compared({ service: [], server: [[step(1, 55), step(2, Number.NaN), step(4, 57), step(8, 104)]] }, false);
    expect(stdout.at(-1)).toBe("validation: disagrees: ./server's throughput at concurrency 2 is NaN % off the measured, beyond 15 %");
  });

  it("measures nothing again where every step agrees the first time", async () => {
    const { asked, stderr, stdout } = await compared({ service: [], server: [[step(1, 55), step(2, 56), step(4, 57), step(8, 104)]] });
    expect(asked).toEqual(["server 1,2,4,8"]);
    expect(stderr).toBe("");
    expect(stdout.at(-1)).toMatch(/^validation: agrees: /);
  });
});
