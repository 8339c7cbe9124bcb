import type { ProgramIo } from "../runtime/program-io.ts";
import { openInBrowser } from "./open-browser.ts";
import { type Dashboard, startDashboard } from "./server.ts";

/** Starts the dashboard for a program's -dashboard flag, prints its URL, and opens it when asked. */
export async function startAnnouncedDashboard(
  io: ProgramIo,
  program: string,
  values: { readonly "dashboard-port": number; readonly open: boolean },
  source: string,
): Promise<Dashboard> {
  const dashboard = await startDashboard({ port: values["dashboard-port"], title: "thundering-herd", source });
  io.stderr.write(`${program}: dashboard on ${dashboard.url}\n`);
  if (values.open) openInBrowser(dashboard.url, (message) => io.stderr.write(`${program}: ${message}\n`));
  return dashboard;
}
