import { parseListenAddress } from "../cli/listen-address.ts";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "::1", "localhost"]);

/** For the flag's check: what is wrong with an -admin-listen address ("" turns the control off). */
export function adminListenProblem(text: string): string | undefined {
  if (text === "") return undefined;
  const parsed = parseListenAddress(text);
  if (typeof parsed === "string") return parsed;
  if (parsed.host === undefined || !LOOPBACK_HOSTS.has(parsed.host)) {
    return "must be a loopback address (127.0.0.1, [::1] or localhost), e.g. 127.0.0.1:8071: the fault control is for a local runner";
  }
  return undefined;
}
