/**
 * A non-negative number from the environment (the benches' and test:chaos's settings), or `dflt`
 * when unset or empty; anything else stops the run with a message naming the variable.
 */
export function numberFromEnv(name: string, dflt: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return n;
}
