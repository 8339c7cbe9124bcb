/** A ring of parallel arrays indexed by ticket modulo its size (a power of two): one of them, typed or not. */
type TicketRing<T> = { [slot: number]: T; readonly length: number };

/**
 * Moves tickets [head, tail) of `from` to their slots in `to`, a larger ring (tickets keep their
 * numbers), and returns `to`: how ServiceQueue and OrderedPool grow their rings, array by array.
 */
export function moveTickets<T, R extends TicketRing<T>>(from: TicketRing<T>, to: R, head: number, tail: number): R {
  const fromMask = from.length - 1;
  const toMask = to.length - 1;
  for (let ticket = head; ticket < tail; ticket++) to[ticket & toMask] = from[ticket & fromMask]!;
  return to;
}
