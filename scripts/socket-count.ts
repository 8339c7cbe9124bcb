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

/**
 * The kernel's TCP sockets with `port` at either end (both sides of a loopback connection
 * count), by state, from Linux's /proc/net/tcp and tcp6.
 */
export function socketsOnPort(port: number): Record<string, number> {
  const counts: Record<string, number> = {};
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
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
      if (local!.endsWith(`:${hexPort}`) || remote!.endsWith(`:${hexPort}`)) {
        const name = TCP_STATES[state!] ?? state!;
        counts[name] = (counts[name] ?? 0) + 1;
      }
    }
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
