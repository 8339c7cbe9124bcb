import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { scenarioYaml } from "../../../src/probe/scenario-out.ts";

const DATE = new Date("2026-11-23T12:00:00Z");

describe("scenarioYaml", () => {
  it("writes the format's fields: version, name, source, the fitted model's flags, error rate, timeout and open-loop load", () => {
    const text = scenarioYaml({
      probed: "http://127.0.0.1:8080/api",
      url: "http://127.0.0.1:8080/api",
      date: DATE,
      spec: { kind: "linear", latency: { kind: "linear", baseDelayMs: 12.5, slopeMs: 2 } },
      summary: "linear",
      errorRate: 0.0123,
      timeoutMs: 1500,
      load: { arrivals: "open", rate: 40 },
    });
    const document = parseDocument(text);
    expect(document.errors).toEqual([]);
    expect(document.toJS()).toEqual({
      scenario: 1,
      name: "probe of http://127.0.0.1:8080/api",
      description: "Measured by thundering-herd probe on 2026-11-23: linear",
      source: { title: "thundering-herd probe of http://127.0.0.1:8080/api, 2026-11-23T12:00:00.000Z", url: "http://127.0.0.1:8080/api" },
      system: { model: "linear", baseDelay: "12.5ms", slope: "2ms", "error-rate": 0.0123, timeout: "1.5s", arrivals: "open", rate: 40 },
    });
  });

  it("writes a queue's spread only for lognormal service times, and closed-loop users as -clients and -lambda", () => {
    const system = (serviceDist: "constant" | "lognormal") =>
      (
        parseDocument(
          scenarioYaml({
            probed: "http://localhost:1/",
            url: "http://localhost:1/",
            date: DATE,
            spec: {
              kind: "queue",
              pool: { threads: 4, serviceTimeMs: 20, serviceDist, serviceSigma: 0.4, queueOrder: "fifo", queueLimit: Infinity },
            },
            summary: "queue",
            errorRate: 0,
            timeoutMs: 2000,
            load: { arrivals: "closed", clients: 300, lambda: 5 },
          }),
        ).toJS() as { system: Record<string, unknown> }
      ).system;
    expect(system("constant")).toEqual({
      model: "queue",
      threads: 4,
      "service-time": "20ms",
      "service-dist": "constant",
      "error-rate": 0,
      timeout: "2s",
      clients: 300,
      lambda: 5,
    });
    expect(system("lognormal")).toMatchObject({ "service-dist": "lognormal", "service-sigma": 0.4 });
  });
});
