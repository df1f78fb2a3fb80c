/**
 * How long a batch worker (the scheduler's cycle, the reconciler's report write) waits after one
 * batch began before it starts the next, given how many items that batch carried.
 *
 * Each batch has a fixed cost (its round trips, its statement's planning and commit, a Kafka
 * send), so a worker that starts a new batch whenever something arrives spends the machine on
 * small batches exactly when it is busiest (ADR 0030 has the figures). The gap grows with the last
 * batch, `perItemMs` per item up to `maxMs`:
 * - a lone item after a quiet spell (a batch of 0 or 1) waits at most `perItemMs`: an idle
 *   cluster's latency does not change;
 * - under a steady `rate` of items per ms the batches grow until the gap reaches `maxMs` once
 *   `rate * perItemMs >= 1` (the gap then always covers more than one item's arrival); below that
 *   rate the batches settle at a few items and the gap at a few ms.
 * So what a batch costs is paid per `maxMs` of work, not per arrival, only where work arrives
 * faster than one item per `perItemMs`. `maxMs` 0 turns pacing off.
 */
export interface LoadGap {
  /** Added per item of the last batch, ms. */
  perItemMs: number;
  /** The most the gap may be, ms (0: no gap). */
  maxMs: number;
}

export function loadGapMs(lastBatchSize: number, gap: LoadGap): number {
  if (gap.maxMs <= 0 || !(lastBatchSize > 0)) return 0;
  return Math.min(gap.maxMs, lastBatchSize * gap.perItemMs);
}
