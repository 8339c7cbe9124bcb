import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../../../src/clock/manual-clock.ts";
import { modelOf, SERVER_MODEL_DEFINITIONS } from "../../../../src/model/servers/models.ts";
import { run } from "../../../../src/sim/main.ts";
import { parseSimArgs, SIM_FLAGS } from "../../../../src/options/sim.ts";
import { type RunningServer, startHttpServer } from "../../../../src/server/http-server.ts";
import { describeModelSpec } from "../../../../src/model/servers/model-flags.ts";
import {
  parseServerArgs,
  resolveServerOptions,
  resolveServerProgramOptions,
  SERVER_PROGRAM_FLAGS,
  serverFigures,
} from "../../../../src/options/server.ts";
import { eventually } from "../../../helpers/eventually.ts";
import { rawGet } from "../../../helpers/raw-http.ts";
import { serverModelFromArgs, settingsArgs } from "../../../helpers/server-model-flags.ts";

/*
 * Every registered server model, whatever it is, through everything that takes a model: a
 * new model's line in src/model/servers/models.ts brings it here with no change to this file.
 */

const ROOT = resolve(import.meta.dirname, "../../../..");

const started: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()));
});

function serverArgs(args: readonly string[]) {
  const parsed = parseServerArgs(args);
  if (parsed.kind !== "run") throw new Error("help");
  return parsed.values;
}

describe.each(SERVER_MODEL_DEFINITIONS.map((definition) => [definition.name, definition] as const))(
  "the server model %s",
  (name, definition) => {
    const spec = serverModelFromArgs(["-model", name]);
    // The registry's view of it, which takes any spec.
    const model = modelOf(spec);

    it("has its own file and test, is named in -model's help, and its flags are in ./server's and ./sim's tables", () => {
      expect(existsSync(resolve(ROOT, `src/model/servers/kinds/${name}.ts`))).toBe(true);
      expect(existsSync(resolve(ROOT, `test/unit/model/servers/kinds/${name}.test.ts`))).toBe(true);
      expect(definition.help.startsWith(`${name} (`)).toBe(true);
      for (const table of [SERVER_PROGRAM_FLAGS, SIM_FLAGS]) {
        const model = table.find((flag) => flag.name === "model")!;
        expect(model.description).toContain(definition.help);
        expect("choices" in model && model.choices).toContain(name);
        const names = table.map((flag) => flag.name);
        for (const flag of definition.reads) expect(names).toContain(flag);
      }
    });

    it("is read with its defaults, and read back from its own settings", () => {
      expect(model).toBe(definition);
      expect(serverModelFromArgs(settingsArgs(model.settings(spec)))).toEqual(spec);
      expect(describeModelSpec(spec).startsWith(`${name} (`)).toBe(true);
    });

    it("runs in the simulator, which serves its users", () => {
      const parsed = parseSimArgs(["-model", name, "-clients", "50", "-lambda", "3", "-duration", "5s", "-seed", "1"]);
      if (parsed.kind !== "run") throw new Error("help");
      const { config, result } = run(parsed.values, "exponential");
      expect(config.model).toEqual(spec);
      expect(result.client.reduce((sum, window) => sum + window.okPerSec, 0)).toBeGreaterThan(0);
    });

    it("is created in-process by ./server, which answers in the time its curve gives one request", async () => {
      const clock = new ManualClock();
      const options = resolveServerOptions(serverArgs(["-model", name, "-listen", "127.0.0.1:0", "-seed", "1"]));
      const server = await startHttpServer(options, clock);
      started.push(server);
      expect(serverFigures(options)).toEqual(model.figures(spec, 2000, Infinity));
      const request = rawGet(server.address.port);
      await eventually(() => server.queue.concurrency === 1, "the request in the server");
      const latencyMs = model.closedLoopLatencyMs(spec, 1, 0);
      // Not a millisecond early: still in the server just before its time, answered at it.
      clock.advanceBy(latencyMs - 1);
      expect(server.queue.concurrency).toBe(1);
      clock.advanceBy(1);
      expect(await request.response).toMatch(/^HTTP\/1\.1 200 OK/);
    });

    it(`${definition.middleTier === undefined ? "cannot" : "can"} be a middle tier (./server -upstream)`, () => {
      const values = serverArgs(["-model", name, "-upstream", "http://127.0.0.1:9/api"]);
      if (definition.middleTier === undefined) expect(() => resolveServerProgramOptions(values)).toThrow(`not -model ${name}`);
      else expect(resolveServerProgramOptions(values).upstream).toBeDefined();
    });
  },
);
