import type { FlagSpec, IntegerFlag } from "../cli/flags.ts";
import { LOAD_CONFIG_FLAGS } from "../config/load.ts";
import { SERVER_FLAGS, SERVER_PROGRAM_FLAGS } from "../options/server.ts";

/*
 * A scenario file's chain of tiers (`tiers:`, docs/tiers.md): each tier's server flags (its
 * `system`) and its policy toward the next tier (its `upstream`), by the programs' own flag
 * names, read from ./server's flag table and the load's (src/config/load.ts).
 */

/** The keys of a tier's `system`: the server's model and its protections, as ./server takes them. */
export const TIER_SYSTEM_FLAGS: readonly FlagSpec[] = (SERVER_FLAGS as readonly FlagSpec[]).filter((flag) => flag.group === "system");

/** The client's flags that say who sends (the users): with tiers, the top-level system holds only these. */
export const USER_FLAG_NAMES: ReadonlySet<string> = new Set(
  (LOAD_CONFIG_FLAGS as readonly FlagSpec[]).filter((flag) => flag.group === "system").map((flag) => flag.name),
);

/** The keys of a tier's `upstream`: the client's retry, hedging and protection flags, and its per-attempt timeout. */
export const UPSTREAM_FLAGS: readonly FlagSpec[] = (LOAD_CONFIG_FLAGS as readonly FlagSpec[]).filter(
  (flag) => flag.group === "strategy" || flag.group === "protection" || flag.name === "timeout" || flag.name === "honor-retry-after",
);

/** A tier's most calls per request to the next tier: ./server's own -upstream-fanout limit, from its flag table. */
export const MAX_FANOUT: number = (SERVER_PROGRAM_FLAGS as readonly FlagSpec[]).find(
  (flag): flag is IntegerFlag => flag.name === "upstream-fanout" && flag.kind === "integer",
)!.max!;

/**
 * The most tiers a chain has. Real call chains are a few tiers deep; a request passes through
 * every tier in one synchronous call (src/runner/chain.ts), a thousand of which overflow the stack,
 * and choose builds every tier's flags for each of its candidates.
 */
export const MAX_TIERS = 64;

/** The keys of one tier in a file. */
export const TIER_KEYS = ["name", "system", "upstream", "fanout"];

/** One tier as a file gives it: its flags as command-line tokens (`-threads=64`), the edge first. */
export interface ScenarioTier {
  readonly name: string;
  /** Its server flags (`system`). */
  readonly system: readonly string[];
  /** Its policy toward the next tier (`upstream`); empty for the bottom. */
  readonly upstream: readonly string[];
  /** How many calls to the next tier each request makes (default 1). */
  readonly fanout: number;
  /** The file's values as written, for -print-scenario. */
  readonly written: {
    readonly system: Readonly<Record<string, string>>;
    readonly upstream: Readonly<Record<string, string>>;
  };
}

/** Keys outside the demo's flags that it reads from a chain's file (src/demo/chain.ts): the users' strategy and the run's length. */
export const DEMO_CHAIN_KEYS: readonly string[] = ["strategy.strategy", "run.duration"];
