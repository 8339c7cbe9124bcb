import { formatDuration } from "../cli/duration.ts";
import { realClock } from "../clock/real-clock.ts";
import { clientEvent, type DashboardEvent, faultEvent, phaseEvents, serverEvent } from "../dashboard/events.ts";
import { playedAs } from "../model/faults/kinds.ts";
import { parseSpeed, playBack, type TimedEvent } from "../dashboard/playback.ts";
import { startAnnouncedDashboard } from "../dashboard/start.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import type { StrategyResult } from "../report/report.ts";
import { explainVerdict } from "../report/verdict-why.ts";
import type { SimFlagValues } from "../options/sim.ts";
import type { Outage } from "../config/simulation-config.ts";

/**
 * `./sim -dashboard`: each simulated run is played back on the live dashboard at `-speed`
 * times real time, as if the programs were running, so that a run of any size can be watched.
 */
export async function playSimulation(io: ProgramIo, values: SimFlagValues) {
  const speed = parseSpeed(values.speed)!;
  const dashboard = await startAnnouncedDashboard(io, "sim", values, `./sim, played back at ${speed}x`);
  let run = 0;
  return {
    async play(result: StrategyResult, outages: readonly Outage[]): Promise<void> {
      if (run === 0) {
        // A playback is a show: it starts when someone is watching, from the beginning.
        io.stderr.write(`sim: the playback starts when the page is opened (Ctrl-C to stop)\n`);
        await dashboard.firstViewer();
      }
      const at = (atMs: number, event: DashboardEvent): TimedEvent<DashboardEvent> => ({ atMs, event });
      const why = explainVerdict(result.metrics);
      const events = [
        at(0, { kind: "run", run, strategy: result.strategy, limit: result.concurrencyLimit }),
        ...phaseEvents(run, 0, outages).map((event) => at(event.kind === "phase" ? event.atS * 1000 : 0, event)),
        // The schedule's other faults as bands of their own (its stops are the outage phases).
        ...(result.phases.faults ?? []).filter((fault) => !playedAs(fault, "pause")).map((fault) => at(fault.atMs, faultEvent(run, fault))),
        ...result.server.map((sample) => at(sample.atMs, serverEvent(run, sample))),
        ...result.client.map((window) => at(window.endMs, clientEvent(run, window))),
        at(result.phases.endMs, { kind: "verdict", run, verdict: result.metrics.verdict, why }),
      ];
      io.stderr.write(
        `sim: ${result.strategy}: playing back on the dashboard at ${speed}x (${formatDuration(Math.round(result.phases.endMs / speed))})\n`,
      );
      await playBack(realClock, events, speed, (event) => dashboard.publish(event));
      run++;
    },
    async finish(): Promise<void> {
      dashboard.publish({ kind: "end", note: "the playback is over" });
      await dashboard.close();
    },
  };
}
