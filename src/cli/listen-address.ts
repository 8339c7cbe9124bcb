/** Where a server listens. `host` undefined means every interface (IPv6 and IPv4). */
export interface ListenAddress {
  readonly host: string | undefined;
  readonly port: number;
}

/**
 * Parses Go's `host:port` form: `127.0.0.1:8070`, `:8070` (all interfaces), `[::1]:8070`,
 * `localhost:0`. Returns a description of what is wrong instead of throwing, for the flag check.
 */
export function parseListenAddress(text: string): ListenAddress | string {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  if (match === null) return "must be host:port, e.g. 127.0.0.1:8070 or :8070 for all interfaces";
  const port = Number(match[3]);
  if (port > 65_535) return "port must be 0-65535";
  const host = match[1] ?? match[2];
  return { host: host === "" ? undefined : host, port };
}

/** For a flag table's `check`: what is wrong with a `host:port`, or undefined. */
export function listenAddressProblem(text: string): string | undefined {
  const parsed = parseListenAddress(text);
  return typeof parsed === "string" ? parsed : undefined;
}

export function formatListenAddress(address: ListenAddress): string {
  const host = address.host ?? "";
  return `${host.includes(":") ? `[${host}]` : host}:${address.port}`;
}
