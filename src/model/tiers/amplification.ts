/**
 * Amplification at each tier of a chain computed from the policies (docs/tiers.md): with no
 * budget, no breaker and everything failing below, a user request becomes at tier i the
 * product of the attempts of every caller above it (the users' attempts, then each tier's
 * upstream attempts) and of their fan-outs. Hedging sends at most its max-attempts copies, so
 * the same product bounds it. Infinity where a caller above has no attempt limit.
 */
export function policyAmplification(
  userAttempts: number,
  callers: readonly { readonly maxAttempts: number; readonly fanout: number }[],
): number[] {
  const amplification = [userAttempts];
  for (const caller of callers) amplification.push(amplification.at(-1)! * caller.maxAttempts * caller.fanout);
  return amplification;
}
