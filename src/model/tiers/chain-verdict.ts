import { durationText } from "../seconds.ts";
import type { Verdict } from "../verdict.ts";
import type { TierFigures, TierVerdict } from "./tier-figures.ts";

/*
 * One verdict for a chain of tiers (docs/tiers.md), from its tiers' own verdicts
 * (tier-figures.ts), for choose's ranking and the demo's headline alike.
 */

/** Tier verdicts, worst first. */
export const TIER_VERDICT_ORDER: readonly TierVerdict[] = ["collapsed", "recovered", "held"];

/** A chain's verdict: its worst tier's (collapsed, then recovered, then held); held for no tier. */
export function chainVerdict(verdicts: readonly TierVerdict[]): TierVerdict {
  return verdicts.reduce<TierVerdict>(
    (worst, verdict) => (TIER_VERDICT_ORDER.indexOf(verdict) < TIER_VERDICT_ORDER.indexOf(worst) ? verdict : worst),
    "held",
  );
}

/**
 * The demo's headline verdict for a chain, in the demo's words (src/model/verdict.ts): the
 * chain's verdict, where the edge's single-server verdict would judge one server alone. What
 * judges no tier stays as the single-server rules said: `invalid` (the users' client fell
 * behind: the tiers' figures are counted from its windows too) and `too-short`. A chain with a
 * tier still down at the end is `collapsed`; otherwise `recovered`, every tier that collapsed
 * having come back or none having collapsed (a single server that never went down is
 * `recovered` too). `why` names the tiers and the first collapse (`firstCollapsedText`).
 */
export function chainHeadline(
  single: { readonly verdict: Verdict; readonly why: string },
  chain: { readonly tiers: readonly TierFigures[]; readonly firstCollapsedText: string },
): { readonly verdict: Verdict; readonly why: string } {
  if (single.verdict === "invalid" || single.verdict === "too-short") return single;
  const down = chain.tiers.filter((tier) => tier.verdict === "collapsed");
  if (down.length > 0) {
    return { verdict: "collapsed", why: `${names(down)} still down at the end; ${chain.firstCollapsedText}` };
  }
  const back = chain.tiers.filter((tier) => tier.verdict === "recovered");
  if (back.length === 0) return { verdict: "recovered", why: `no tier collapsed (${names(chain.tiers)} held)` };
  const last = back.reduce((latest, tier) => (tier.recoveredAtMs! > latest.recoveredAtMs! ? tier : latest));
  return {
    verdict: "recovered",
    why: `every tier that collapsed came back, the last ${last.name} at ${durationText(last.recoveredAtMs!)}; ${chain.firstCollapsedText}`,
  };
}

const names = (tiers: readonly TierFigures[]) => tiers.map((tier) => tier.name).join(", ");
