import type { FlagSpec } from "../cli/flags.ts";
import { BLOG_NETWORK } from "../model/occ/network-delay.ts";
import { BLOG_BASE_MS, BLOG_CAP_MS, BLOG_RUN_NAMES, blogRunsProblem } from "./blog-backoff.ts";

/** The flags that the OCC workload's programs share: the blog's backoff and its network. */

export const BLOG_BACKOFF_FLAGS = [
  {
    name: "base",
    group: "strategy",
    kind: "duration",
    default: BLOG_BASE_MS,
    minMs: 0,
    description: "the blog's base: its waits are min(cap, base x 2^n) from n = 1, decorrelated jitter's from base",
  },
  { name: "cap", group: "strategy", kind: "duration", default: BLOG_CAP_MS, minMs: 0, description: "the blog's cap on every wait" },
] as const satisfies readonly FlagSpec[];

/**
 * -strategies for the simulator, -strategy for the client (one name there). In the groups the
 * requests workload gives the same names, so a scenario file has one section for each.
 */
export function blogStrategiesFlag<Name extends string>(name: Name, fallback: string, what: string) {
  return {
    name,
    group: name === "strategies" ? "run" : "strategy",
    kind: "string",
    default: fallback,
    placeholder: "list",
    description: `${what}: ${BLOG_RUN_NAMES.join(", ")}${name === "strategies" ? ", or all" : ""} (each is a strategy of the registry, listed below)`,
    check: blogRunsProblem,
  } as const satisfies FlagSpec;
}

export const NETWORK_DELAY_FLAGS = [
  {
    name: "net-delay",
    group: "system",
    kind: "duration",
    default: BLOG_NETWORK.meanMs,
    minMs: 0,
    description: "mean one-way network delay, drawn |normal(mean, sd)| per request and per answer (the blog's Net(10, 2))",
  },
  {
    name: "net-delay-sd",
    group: "system",
    kind: "duration",
    default: BLOG_NETWORK.sdMs,
    minMs: 0,
    description: "standard deviation of the one-way network delay",
  },
] as const satisfies readonly FlagSpec[];
