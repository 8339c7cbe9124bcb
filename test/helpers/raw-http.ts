import { connect, type Socket } from "node:net";

export interface RawRequest {
  readonly socket: Socket;
  /** Resolves with the whole response text once the server closes or answers fully. */
  readonly response: Promise<string>;
  /** Resolves when the TCP connection is established. */
  readonly connected: Promise<void>;
  /** What has arrived so far. */
  readonly received: () => string;
}

/**
 * One GET over a fresh loopback TCP connection, with `Connection: close`, so a test controls
 * exactly when the client goes away (socket.destroy()).
 */
export function rawGet(port: number, path = "/api", extraHeaders = ""): RawRequest {
  const socket = connect({ host: "127.0.0.1", port });
  let text = "";
  const connected = new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const response = new Promise<string>((resolve) => {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("close", () => resolve(text));
    socket.on("error", () => {});
  });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extraHeaders}\r\n`);
  return { socket, response, connected, received: () => text };
}

export async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  return (await response.json()) as T;
}
