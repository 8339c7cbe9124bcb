/*
 * The two headers through which the client and the server protect the fleet, shared by the
 * real programs and the simulator so that both round and read them the same way.
 */

/**
 * Server pushback: the whole seconds a shed request's `Retry-After` asks for. HTTP allows
 * only whole seconds (delay-seconds, RFC 9110 section 10.2.3), so a wait that is not a
 * whole number of seconds is rounded up: a client told to come back never comes back
 * earlier than the server asked. 0 means no header.
 */
export function retryAfterSeconds(waitMs: number): number {
  return waitMs > 0 ? Math.ceil(waitMs / 1000) : 0;
}

/**
 * Deadline propagation: the header carries the attempt's deadline as an absolute time, Unix
 * epoch milliseconds on the client's clock (the time it sent the attempt plus its timeout).
 *
 * Absolute rather than gRPC's relative `grpc-timeout` (grpc/grpc doc/PROTOCOL-HTTP2.md):
 * a relative timeout is counted from when the server reads the request, so it cannot see
 * the time a request waited in the kernel's accept queue while the server was stopped,
 * which is exactly the stale work of the crash experiment. The price is that the two clocks
 * must agree: on loopback they are the same clock; across hosts the clock skew shifts
 * every deadline.
 */
export const DEADLINE_HEADER = "x-request-deadline-ms";

/** The header's value for a deadline at `epochMs` (rounded up: never earlier than the client's own). */
export function formatDeadline(epochMs: number): string {
  return String(Math.ceil(epochMs));
}

/** The deadline a header value states, in epoch ms, or undefined for a missing or malformed value. */
export function parseDeadline(value: string | string[] | undefined): number | undefined {
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  // At most 15 digits: an integer that a double holds exactly (epoch ms stay below 10^13 for centuries).
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}
