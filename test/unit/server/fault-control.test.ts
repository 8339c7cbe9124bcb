import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { parseServerLine } from "../../../src/contracts/server-line.ts";
import { type AdminServer, startAdminServer } from "../../../src/server/admin-server.ts";
import { adminListenProblem } from "../../../src/options/admin-listen.ts";
import {
  activeOf,
  conditionsOfActive,
  FaultControlError,
  formatActiveFaults,
  parseFaultControl,
} from "../../../src/model/faults/control.ts";
import { type RunningServer, startHttpServer } from "../../../src/server/http-server.ts";
import { formatServerLine } from "../../../src/contracts/server-text.ts";
import { serverLine } from "../../../src/contracts/server-line-writer.ts";
import { CONTROLLED_KINDS } from "../../../src/model/faults/kinds.ts";
import { eventually } from "../../helpers/eventually.ts";
import { scrape } from "../../helpers/prometheus.ts";
import { rawGet } from "../../helpers/raw-http.ts";
import { IDLE_SERVER, TEST_SERVER_OPTIONS } from "../../helpers/server-fixtures.ts";

describe("the fault control's body", () => {
  it("reads the schedule's notation without times, in the order given; empty or none lifts every fault", () => {
    expect(parseFaultControl("capacity*0.5, slow * 3,errors*0.2")).toEqual([
      { kind: "capacity", factor: 0.5 },
      { kind: "slow", factor: 3 },
      { kind: "errors", factor: 0.2 },
    ]);
    expect(parseFaultControl("")).toEqual([]);
    expect(parseFaultControl("  none \n")).toEqual([]);
    expect(formatActiveFaults(parseFaultControl("capacity*0.5, errors*0.2"))).toBe("capacity*0.5, errors*0.2");
    expect(formatActiveFaults([])).toBe("none");
  });

  it.each([
    ["capacity", '"capacity" is not kind*factor, e.g. capacity*0.5 (or an empty body to lift every fault)'],
    ["capacity*", '"capacity*" is not kind*factor, e.g. capacity*0.5 (or an empty body to lift every fault)'],
    ["capacity*abc", '"capacity*abc": capacity needs a factor above 0, e.g. capacity@10s+30s*0.5'],
    ["capacity*0", '"capacity*0": capacity needs a factor above 0, e.g. capacity@10s+30s*0.5'],
    ["slow*-1", '"slow*-1": slow needs a factor above 0, e.g. slow@10s+30s*3'],
    ["errors*1.5", '"errors*1.5": errors needs a share from 0 to 1, e.g. errors@10s+30s*0.2'],
    // The kinds a control turns on, from the registry: a new one joins the list without a change here.
    ["stop*1", `"stop*1": the control takes ${CONTROLLED_KINDS.join(", ")}, not stop`],
    ["spike*2", `"spike*2": the control takes ${CONTROLLED_KINDS.join(", ")}, not spike`],
    ["capacity*0.5,,", '"" is not kind*factor, e.g. capacity*0.5 (or an empty body to lift every fault)'],
    ["\u0000\u00ff", `"\u0000\u00ff" is not kind*factor, e.g. capacity*0.5 (or an empty body to lift every fault)`],
  ])("refuses %j with one line", (body, message) => {
    expect(() => parseFaultControl(body)).toThrow(new FaultControlError(message));
  });

  it("combines overlapping faults as the simulator does, and takes from a schedule only the kinds it controls", () => {
    expect(conditionsOfActive(parseFaultControl("capacity*0.5, capacity*0.5, slow*3, errors*0.1, errors*0.3"))).toEqual({
      capacityFactor: 0.25,
      slowFactor: 3,
      errorRate: 0.3,
    });
    expect(conditionsOfActive([])).toEqual({ capacityFactor: 1, slowFactor: 1, errorRate: undefined });
    const schedule = [
      { kind: "stop", atMs: 0, durationMs: 1, factor: 1 },
      { kind: "slow", atMs: 0, durationMs: 1, factor: 3 },
      { kind: "spike", atMs: 0, durationMs: 1, factor: 2 },
    ] as const;
    expect(activeOf(schedule)).toEqual([{ kind: "slow", factor: 3 }]);
  });

  it("listens on loopback only", () => {
    expect(adminListenProblem("")).toBeUndefined();
    expect(adminListenProblem("127.0.0.1:0")).toBeUndefined();
    expect(adminListenProblem("[::1]:8071")).toBeUndefined();
    expect(adminListenProblem("localhost:8071")).toBeUndefined();
    expect(adminListenProblem(":8071")).toMatch(/^must be a loopback address/);
    expect(adminListenProblem("0.0.0.0:8071")).toMatch(/^must be a loopback address/);
    expect(adminListenProblem("nonsense")).toBe("must be host:port, e.g. 127.0.0.1:8070 or :8070 for all interfaces");
  });
});

describe("the server's line with the fault control", () => {
  const snapshot = { ...IDLE_SERVER, concurrency: 3, peakConcurrency: 3, admitted: 3 };

  it("keeps its prefix and appends the faults on; the JSON line carries them, [] when none, nothing without the control", () => {
    const faults = parseFaultControl("capacity*0.5, errors*0.2");
    expect(formatServerLine(0, snapshot, "utc", faults)).toBe(
      "Jan  1 00:00:00.000: concurrency:    3, last delay: 100ms, faults: capacity*0.5 errors*0.2",
    );
    expect(formatServerLine(0, snapshot, "utc", [])).toBe("Jan  1 00:00:00.000: concurrency:    3, last delay: 100ms");
    const place = { file: "test", line: 1 };
    expect(parseServerLine(JSON.stringify(serverLine(0, snapshot, faults)), place).faults).toEqual(faults);
    expect(parseServerLine(JSON.stringify(serverLine(0, snapshot, [])), place).faults).toEqual([]);
    expect(serverLine(0, snapshot)).not.toHaveProperty("faults");
  });
});

describe("the fault control's listener", () => {
  const started: (RunningServer | AdminServer)[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((server) => server.close()));
  });

  async function start() {
    const clock = new ManualClock();
    const server = await startHttpServer(
      { ...TEST_SERVER_OPTIONS, seed: 1, metrics: true, adminListen: { host: "127.0.0.1", port: 0 } },
      clock,
    );
    started.push(server);
    const admin = await startAdminServer({ host: "127.0.0.1", port: 0 }, server);
    started.push(admin);
    return { server, admin, clock };
  }

  const send = (port: number, method: string, body?: string, path = "/faults") =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const outgoing = request({ host: "127.0.0.1", port, method, path }, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode!, body: text }));
      });
      outgoing.on("error", reject);
      outgoing.end(body);
    });

  it("sets the faults on the model and lifts them; a bad request gets one line and changes nothing", async () => {
    const { server, admin, clock } = await start();
    expect(await send(admin.port, "GET")).toEqual({ status: 200, body: '{"faults":[],"text":"none"}\n' });
    const set = await send(admin.port, "PUT", "capacity*0.5, errors*0.2");
    expect(set.status).toBe(200);
    expect(JSON.parse(set.body)).toEqual({ faults: parseFaultControl("capacity*0.5, errors*0.2"), text: "capacity*0.5, errors*0.2" });
    expect(server.activeFaults()).toEqual(parseFaultControl("capacity*0.5, errors*0.2"));
    // The model works under them: every request answered 500 while errors*1 is on, 200 once lifted.
    await send(admin.port, "PUT", "errors*1");
    const failed = rawGet(server.address.port);
    await eventually(() => server.queue.concurrency === 1, "the request in service");
    clock.advanceBy(50);
    expect(await failed.response).toMatch(/^HTTP\/1\.1 500 /);
    await send(admin.port, "PUT", "capacity*0.5, errors*0.2");

    expect(await send(admin.port, "PUT", "capacity*zero")).toEqual({
      status: 400,
      body: '"capacity*zero": capacity needs a factor above 0, e.g. capacity@10s+30s*0.5\n',
    });
    expect(await send(admin.port, "PUT", "x".repeat(10_000)).catch(() => ({ status: 413 }))).toMatchObject({ status: 413 });
    expect((await send(admin.port, "POST", "slow*2")).status).toBe(405);
    expect((await send(admin.port, "GET", undefined, "/other")).status).toBe(404);
    expect(server.activeFaults()).toEqual(parseFaultControl("capacity*0.5, errors*0.2"));

    // The metrics say the factor of each kind on now.
    const factors = async () => {
      const { scrape: scraped } = await scrape(`http://127.0.0.1:${server.address.port}/metrics`);
      return ["capacity", "slow", "errors"].map((kind) => scraped.value("thundering_herd_server_fault_factor", { kind }));
    };
    expect(await factors()).toEqual([0.5, 1, 0.2]);

    expect(JSON.parse((await send(admin.port, "PUT", "")).body)).toEqual({ faults: [], text: "none" });
    expect(await factors()).toEqual([1, 1, 0]);
    expect(server.activeFaults()).toEqual([]);
    const served = rawGet(server.address.port);
    await eventually(() => server.queue.concurrency === 1, "the request in service");
    clock.advanceBy(50);
    expect(await served.response).toMatch(/^HTTP\/1\.1 200 /);
  });
});
