import { readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";

/**
 * Loopback services that answer badly, on raw sockets (node:http would refuse to write most of
 * these): each reads a request's head and answers as its kind says. Every connection's bytes
 * written are counted at its close, so a test shows that a reader gave up (and how much it let
 * in) by counting, not by timing.
 */
export type HostileKind =
  | "broken-chunks" // a chunked body whose second chunk size is not hexadecimal
  | "endless-body" // a chunked body that never ends, written as fast as the reader takes it
  | "huge-content-length" // Content-Length of 1 GB, a few bytes, then a close
  | "trickle" // a chunked body of one byte every TRICKLE_TICK_MS, never ending
  | "reset" // a TCP reset instead of an answer
  | "garbage" // bytes that are not HTTP, then a close
  | "hang" // accepts and reads, never answers
  | "redirect-loop"; // 302 to itself

export const HOSTILE_KINDS: readonly HostileKind[] = [
  "broken-chunks",
  "endless-body",
  "huge-content-length",
  "trickle",
  "reset",
  "garbage",
  "hang",
  "redirect-loop",
];

const TRICKLE_TICK_MS = 10;
const ENDLESS_CHUNK = Buffer.alloc(64 * 1024, 0x61);

export interface HostileService {
  readonly url: string;
  /** Requests whose head arrived. */
  readonly requests: () => number;
  /** Bytes each closed connection had written (accepted by the kernel) when it closed. */
  readonly bytesPerClosedConnection: readonly number[];
  /** Connections still open. */
  readonly openConnections: () => number;
  close(): Promise<void>;
}

export async function startHostileService(kind: HostileKind): Promise<HostileService> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const bytesPerClosedConnection: number[] = [];
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    let head = "";
    let answered = false;
    const timers: NodeJS.Timeout[] = [];
    socket.on("close", () => {
      for (const timer of timers) clearInterval(timer);
      sockets.delete(socket);
      bytesPerClosedConnection.push(socket.bytesWritten);
    });
    socket.on("data", (data) => {
      head += data.toString("latin1");
      if (answered || !head.includes("\r\n\r\n")) return;
      answered = true;
      requests++;
      answer(kind, socket, head, timers);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/api`,
    requests: () => requests,
    bytesPerClosedConnection,
    openConnections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function answer(kind: HostileKind, socket: Socket, head: string, timers: NodeJS.Timeout[]): void {
  const chunkedHead = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n";
  switch (kind) {
    case "broken-chunks":
      socket.end(`${chunkedHead}2\r\nOK\r\nzz\r\nnot a chunk\r\n0\r\n\r\n`);
      return;
    case "endless-body": {
      socket.write(chunkedHead);
      const chunk = Buffer.concat([Buffer.from(`${ENDLESS_CHUNK.length.toString(16)}\r\n`), ENDLESS_CHUNK, Buffer.from("\r\n")]);
      // As fast as the reader takes it, never more than the socket's buffer ahead.
      const pump = () => {
        while (!socket.destroyed && socket.write(chunk));
      };
      socket.on("drain", pump);
      pump();
      return;
    }
    case "huge-content-length":
      socket.end("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000000\r\n\r\nOK, the rest is coming");
      return;
    case "trickle":
      socket.write(chunkedHead);
      timers.push(setInterval(() => socket.write("1\r\nx\r\n"), TRICKLE_TICK_MS));
      return;
    case "reset":
      socket.resetAndDestroy();
      return;
    case "garbage":
      socket.end(Buffer.from([0x00, 0xff, 0x1b, 0x5b, 0x32, 0x4a, 0x0d, 0x0a, 0x7f, 0x80, 0x0d, 0x0a, 0x0d, 0x0a]));
      return;
    case "hang":
      return;
    case "redirect-loop": {
      const path = /^GET (\S+) /.exec(head)?.[1] ?? "/";
      socket.end(`HTTP/1.1 302 Found\r\nLocation: ${path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
  }
}

/**
 * What a reader that stopped at `capBytes` can have let an endless body's service write: the
 * cap, what the kernel's socket buffers hold on both sides (tcp_rmem's and tcp_wmem's maxima),
 * and a MiB for undici's and the stream's own buffers. A reader that never stopped would not end.
 */
export function bytesAReaderStoppedAtTheCapLetsThrough(capBytes: number): number {
  const max = (file: string) => Number(readFileSync(file, "utf8").trim().split(/\s+/)[2]);
  try {
    return capBytes + max("/proc/sys/net/ipv4/tcp_rmem") + max("/proc/sys/net/ipv4/tcp_wmem") + 1024 * 1024;
  } catch {
    return capBytes + 64 * 1024 * 1024;
  }
}
