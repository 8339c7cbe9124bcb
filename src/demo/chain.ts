import { parseDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import { parseClientArgs } from "../options/client.ts";
import { resolveRetryPolicy } from "../config/load.ts";
import { policyAmplification } from "../model/tiers/amplification.ts";
import type { TierPlan } from "../runtime/experiment.ts";
import type { ScenarioTier } from "../scenario-file/tiers.ts";
import { parseServerArgs, resolveServerOptions } from "../options/server.ts";

/*
 * The demo's chain of real servers (docs/tiers.md): one ./server per tier of a scenario file's
 * `tiers:`, each with its own model flags (`system`) and its policy toward the next tier
 * (`upstream`, as the server's `-upstream-…` flags); the demo adds each middle tier's
 * `-upstream` URL once the tier below listens.
 */

/** A placeholder upstream for checking a middle tier's flags before anything runs. */
const CHECK_UPSTREAM = ["-upstream", "http://127.0.0.1:1/api"];

/** Each tier's ./server flags, checked by the server's own flag table; a tier without a seed gets `seed + its index`. */
export function tierPlans(tiers: readonly ScenarioTier[], seed: number, reserved: Readonly<Record<string, string>>): TierPlan[] {
  return tiers.map((tier, index) => {
    const bottom = index === tiers.length - 1;
    const upstream = tier.upstream.map((token) => token.replace(/^--?/, "-upstream-"));
    const fanout = tier.fanout > 1 ? ["-upstream-fanout", String(tier.fanout)] : [];
    const serverArgs = [...tier.system, ...upstream, ...fanout];
    try {
      for (const token of serverArgs) {
        const name = /^--?([^=]+)/.exec(token)?.[1];
        if (name !== undefined && Object.hasOwn(reserved, name)) throw new UsageError(`-${name} is not allowed: ${reserved[name]}`);
      }
      const parsed = parseServerArgs(bottom ? serverArgs : [...serverArgs, ...CHECK_UPSTREAM]);
      if (parsed.kind === "help") throw new UsageError("-h is not a flag of a tier");
      resolveServerOptions(parsed.values);
      const seeded = parsed.values.seed === undefined ? [...serverArgs, "-seed", String(seed + index)] : serverArgs;
      return { name: tier.name, serverArgs: seeded };
    } catch (error) {
      if (error instanceof UsageError) throw new UsageError(`tier ${tier.name}: ${error.message}`);
      throw error;
    }
  });
}

/** Requests per user request at each tier from the policies (no budget, everything failing below): the product of the attempts above. */
export function chainPolicyAmplification(userMaxAttempts: number, tiers: readonly ScenarioTier[]): number[] {
  const callers = tiers.slice(0, -1).map((tier) => {
    const parsed = parseClientArgs(tier.upstream);
    if (parsed.kind === "help") throw new UsageError(`tier ${tier.name} upstream: -h is not a flag of a tier`);
    return { maxAttempts: resolveRetryPolicy(parsed.values).retry.maxAttempts, fanout: tier.fanout };
  });
  return policyAmplification(userMaxAttempts, callers);
}

/**
 * What a chain's file says of the run that the demo's flags do not carry: the users'
 * strategy (`strategy.strategy`, which runs instead of the demo's default pair) and the run's
 * length (`run.duration`, as ./sim runs it: the observation lasts from the last fault's end to it).
 */
export async function chainRunOf(text: string): Promise<{ strategy: string | undefined; durationMs: number | undefined }> {
  const { parse } = await import("yaml");
  const data = parse(text) as { strategy?: { strategy?: unknown }; run?: { duration?: unknown } } | null;
  const strategy = data?.strategy?.strategy;
  const duration = data?.run?.duration;
  return {
    strategy: typeof strategy === "string" ? strategy : undefined,
    durationMs: typeof duration === "string" || typeof duration === "number" ? parseDuration(String(duration)) : undefined,
  };
}
