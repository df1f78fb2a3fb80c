/**
 * Decayed usage for fair share (contract 5.4, ADR 0037): a GPU-second used at time t counts
 * 2^(-(now - t) / halfLife) at `now`. Usage is an integral over time, so a rank holding `gpus` from
 * `start` to `end` counts gpus * halfLife / ln 2 * (2^(-(now-end)/hl) - 2^(-(now-start)/hl)): the
 * same figure whether it is added when the rank ends or read while it still runs (end = now).
 */

/** A value decayed from `fromMs` to `toMs` (never grown: a clock that went back decays nothing). */
export function decayUsage(value: number, fromMs: number, toMs: number, halfLifeSeconds: number): number {
  const elapsed = Math.max(0, toMs - fromMs) / 1000;
  return value * Math.pow(2, -elapsed / halfLifeSeconds);
}

/** Decayed GPU-seconds at `nowMs` of `gpus` held from `startMs` to `endMs` (clipped to now). */
export function decayedGpuSeconds(gpus: number, startMs: number, endMs: number, nowMs: number, halfLifeSeconds: number): number {
  const end = Math.min(endMs, nowMs);
  if (gpus <= 0 || end <= startMs) return 0;
  const hl = halfLifeSeconds;
  const weight = (t: number) => Math.pow(2, -Math.max(0, nowMs - t) / 1000 / hl);
  return ((gpus * hl) / Math.LN2) * (weight(end) - weight(startMs));
}
