import { readFileSync } from "node:fs";

/** TCP states as Linux numbers them in /proc/net/tcp (include/net/tcp_states.h). */
const TCP_STATES: Readonly<Record<string, string>> = {
  "01": "ESTABLISHED",
  "02": "SYN_SENT",
  "03": "SYN_RECV",
  "04": "FIN_WAIT1",
  "05": "FIN_WAIT2",
  "06": "TIME_WAIT",
  "07": "CLOSE",
  "08": "CLOSE_WAIT",
  "09": "LAST_ACK",
  "0A": "LISTEN",
  "0B": "CLOSING",
  "0C": "NEW_SYN_RECV",
};

/** One of the kernel's TCP sockets, as Linux's /proc/net/tcp and tcp6 list it. */
export interface KernelSocket {
  localPort: number;
  remotePort: number;
  state: string;
}

/** Every TCP socket the kernel lists now (IPv4 and IPv6). */
export function kernelSockets(): KernelSocket[] {
  const sockets: KernelSocket[] = [];
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 4) continue;
      const [, local, remote, state] = fields;
      const port = (address: string) => parseInt(address.slice(address.lastIndexOf(":") + 1), 16);
      sockets.push({ localPort: port(local!), remotePort: port(remote!), state: TCP_STATES[state!] ?? state! });
    }
  }
  return sockets;
}

/**
 * The kernel's TCP sockets with `port` at either end (both sides of a loopback connection
 * count), by state.
 */
export function socketsOnPort(port: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { localPort, remotePort, state } of kernelSockets()) {
    if (localPort === port || remotePort === port) counts[state] = (counts[state] ?? 0) + 1;
  }
  return counts;
}

/** Sockets that a process still holds: every state but TIME_WAIT (the kernel's alone) and LISTEN. */
export function heldSockets(counts: Readonly<Record<string, number>>): number {
  return Object.entries(counts)
    .filter(([state]) => state !== "TIME_WAIT" && state !== "LISTEN")
    .reduce((sum, [, count]) => sum + count, 0);
}

export const describeSockets = (counts: Readonly<Record<string, number>>) =>
  Object.keys(counts).length === 0
    ? "none"
    : Object.entries(counts)
        .map(([state, count]) => `${state} ${count}`)
        .join(", ");
