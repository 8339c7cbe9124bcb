/*
 * Hedging, as gRPC's hedgingPolicy (proposal A6, "gRPC Retry Design",
 * https://github.com/grpc/proposal/blob/master/A6-client-retries.md): up to maxAttempts
 * copies of one request, the next sent hedgingDelay after the previous unless an answer
 * came; a non-fatal failure sends the next copy at once; the first success, or a fatal
 * failure, is kept and every other copy in flight is cancelled. The same idea as Polly v8's
 * hedging strategy (https://www.pollydocs.org/strategies/hedging) and as the "hedged
 * requests" of Dean and Barroso, "The Tail at Scale", CACM 56(2), 2013.
 *
 * Pure decisions on counts; the attempt lifecycle (src/model/attempt.ts) sends and cancels.
 */

/** What a hedged request does after one of its copies answered. */
export const HEDGE_KEEP = 0;
/** A non-fatal failure with copies left: send the next at once, its delay shortcut. */
export const HEDGE_SEND_NEXT = 1;
/** A non-fatal failure, every copy sent, some still in flight: wait for them. */
export const HEDGE_WAIT = 2;
export type HedgeAnswer = typeof HEDGE_KEEP | typeof HEDGE_SEND_NEXT | typeof HEDGE_WAIT;

/**
 * After a copy answered: a success or a fatal failure is kept (the request ends with it,
 * the others cancelled); so is the last failure when nothing is left in flight or to send.
 * `sent` counts the copies sent so far, `inFlight` those still in flight besides this one.
 */
export function hedgeAfterAnswer(maxAttempts: number, sent: number, inFlight: number, ok: boolean, nonFatal: boolean): HedgeAnswer {
  if (ok || !nonFatal) return HEDGE_KEEP;
  if (sent < maxAttempts) return HEDGE_SEND_NEXT;
  return inFlight > 0 ? HEDGE_WAIT : HEDGE_KEEP;
}

/** The hedging delay passed with no answer kept: whether another copy goes out. */
export function hedgeAfterDelay(maxAttempts: number, sent: number): boolean {
  return sent < maxAttempts;
}
