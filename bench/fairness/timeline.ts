/**
 * What bench:fairness reads back from a run, as plain intervals: when each rank held GPUs
 * (attempt_nodes created_at..released_at) and when each job waited (created_at..first placement).
 * Everything in milliseconds of wall clock; an open interval (null end) lasts to the cut-off.
 */
export interface Holding {
  team: string;
  gpus: number;
  startMs: number;
  endMs: number | null;
}

export interface JobWait {
  team: string;
  submitMs: number;
  /** First placement; null: still waiting at the cut-off. */
  startMs: number | null;
}

/** [start, end) clipped to [fromMs, toMs); null when nothing of it lies inside. */
export function clip(startMs: number, endMs: number | null, fromMs: number, toMs: number): [number, number] | null {
  const a = Math.max(startMs, fromMs);
  const b = Math.min(endMs ?? toMs, toMs);
  return b > a ? [a, b] : null;
}

/** The length of the union of intervals, each clipped to [fromMs, toMs). */
export function unionMs(intervals: ReadonlyArray<readonly [number, number | null]>, fromMs: number, toMs: number): number {
  const parts = intervals
    .map(([a, b]) => clip(a, b, fromMs, toMs))
    .filter((p): p is [number, number] => p !== null)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let curA = -Infinity;
  let curB = -Infinity;
  for (const [a, b] of parts) {
    if (a > curB) {
      if (curB > curA) total += curB - curA;
      curA = a;
      curB = b;
    } else curB = Math.max(curB, b);
  }
  if (curB > curA) total += curB - curA;
  return total;
}

/**
 * The waits that lasted past `graceMs`, each starting `graceMs` after its submission: every job
 * waits the moment the scheduler takes to place it, which is dispatch latency, not work held back.
 * What utilisation while waiting and a team's backlog are judged on.
 */
export function waitsPastGrace(waits: readonly JobWait[], graceMs: number): JobWait[] {
  return waits.filter((w) => w.startMs === null || w.startMs > w.submitMs + graceMs).map((w) => ({ ...w, submitMs: w.submitMs + graceMs }));
}
