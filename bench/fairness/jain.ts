/**
 * Jain's fairness index of allocations normalised by what each party is entitled to
 * (x_i = got_i / entitled_i): (Σx)² / (n Σx²). 1 when every party gets the same fraction of its
 * entitlement, 1/n when one party gets everything.
 */
export function jainIndex(xs: readonly number[]): number {
  const sum = xs.reduce((s, x) => s + x, 0);
  const squares = xs.reduce((s, x) => s + x * x, 0);
  // No parties, or all at zero: nothing to judge.
  return squares === 0 ? NaN : (sum * sum) / (xs.length * squares);
}
