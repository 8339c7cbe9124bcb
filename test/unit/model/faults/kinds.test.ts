import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseDuration, formatDuration } from "../../../../src/cli/duration.ts";
import { parseServerLine } from "../../../../src/contracts/server-line.ts";
import { serverLine } from "../../../../src/contracts/server-line-writer.ts";
import { faultEvent } from "../../../../src/dashboard/events.ts";
import { parseFaultControl } from "../../../../src/model/faults/control.ts";
import { formatFault, parseFaults } from "../../../../src/model/faults/fault-schedule.ts";
import { FAULT_KIND_DEFINITIONS } from "../../../../src/model/faults/kinds.ts";
import { run } from "../../../../src/sim/main.ts";
import { parseSimArgs } from "../../../../src/options/sim.ts";
import { FAULTS_HELP } from "../../../../src/config/simulation.ts";
import { IDLE_SERVER } from "../../../helpers/server-fixtures.ts";

/*
 * Every registered fault kind, whatever it is, through everything that takes a kind: a new
 * kind's line in src/model/faults/kinds.ts brings it here with no change to this file.
 */

const ROOT = resolve(import.meta.dirname, "../../../..");
/** A fault of the kind as its own rule's example gives it (`e.g. capacity@10s+30s*0.5`), moved to 5 s for 3 s. */
function exampleFault(name: string, rule: string | undefined): string {
  const factor = rule === undefined ? "" : `*${/\*([\d.]+)$/.exec(rule)![1]}`;
  return `${name}@5s+3s${factor}`;
}

/**
 * A thread pool at three quarters of its capacity (8 threads × 20 ms serve 400 a second; 600 users
 * send 300), 1 s windows, 20 s: close enough to its limit that every kind's example moves what the
 * clients see during it (measured: by 0.37 of the OK rate at least, errors×0.2; a kind whose
 * effect is lost moves it by 0).
 */
function clientWindows(faults: readonly string[]) {
  const parsed = parseSimArgs([
    ...["-model", "queue", "-threads", "8", "-service-time", "20ms", "-clients", "600", "-lambda", "2"],
    ...["-timeout", "500ms", "-interval", "1s", "-duration", "20s", ...faults],
  ]);
  if (parsed.kind !== "run") throw new Error("help");
  return run(parsed.values, "exponential").result.client.map((window) => ({
    endMs: window.endMs,
    figures: [window.okPerSec, window.errorsPerSec, window.attemptsPerSec],
  }));
}

/** The same run without a fault, the same for every kind: run once. */
const WITHOUT_FAULTS = clientWindows([]);

/** How far the clients' OK, errors and attempts moved in the fault's windows (5 s to 9 s), as a share of the OK rate without it. */
function effectOf(faulted: ReturnType<typeof clientWindows>): number {
  let moved = 0;
  let ok = 0;
  faulted.forEach(({ endMs, figures }, index) => {
    if (endMs <= 5000 || endMs > 9000) return;
    const without = WITHOUT_FAULTS[index]!.figures;
    ok += without[0]!;
    moved += figures.reduce((sum, value, figure) => sum + Math.abs(value - without[figure]!), 0);
  });
  return moved / ok;
}

describe.each(FAULT_KIND_DEFINITIONS.map((definition) => [definition.name, definition] as const))(
  "the fault kind %s",
  (name, definition) => {
    const text = exampleFault(name, definition.factor?.rule);

    it("has its own file and test, is read and written back by the schedule, and is named in -faults' help", () => {
      expect(existsSync(resolve(ROOT, `src/model/faults/kinds/${name}.ts`))).toBe(true);
      expect(existsSync(resolve(ROOT, `test/unit/model/faults/kinds/${name}.test.ts`))).toBe(true);
      const [fault] = parseFaults(text, parseDuration);
      expect(fault!.kind).toBe(name);
      expect(formatFault(fault!, formatDuration)).toBe(text);
      expect(definition.help.startsWith(`${name}`)).toBe(true);
      expect(FAULTS_HELP).toContain(definition.help);
    });

    it("moves what the simulator's clients see while it is on, by a tenth of their OK rate at least", () => {
      expect(effectOf(clientWindows(["-faults", text]))).toBeGreaterThan(0.1);
    });

    it("is marked on the dashboard in its own colour; a paused or restarted server's lines break", () => {
      const event = faultEvent(0, parseFaults(text, parseDuration)[0]!);
      expect(event).toMatchObject({ kind: "fault", fault: name, fill: definition.fill });
      expect(event).toMatchObject({ silencesServer: definition.mechanism === "pause" || definition.mechanism === "restart" });
    });

    it.runIf(definition.mechanism === "condition")("is taken by the real server's fault control and its report line", () => {
      const factor = Number(/\*(.+)$/.exec(text)![1]);
      expect(parseFaultControl(`${name}*${factor}`)).toEqual([{ kind: name, factor }]);
      const faults = parseFaultControl(`${name}*${factor}`);
      expect(parseServerLine(JSON.stringify(serverLine(0, IDLE_SERVER, faults)), { file: "test", line: 1 }).faults).toEqual(faults);
    });

    it.runIf(definition.mechanism !== "condition")("is refused by the server's fault control, which takes only condition kinds", () => {
      expect(() => parseFaultControl(`${name}*2`)).toThrow(`not ${name}`);
    });
  },
);
