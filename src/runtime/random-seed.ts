/** A fresh 31-bit seed for runs that ask for none; printed so the run can be repeated. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}
