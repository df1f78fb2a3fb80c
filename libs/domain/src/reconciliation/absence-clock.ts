/**
 * Whether the control plane may count a node's silence about an attempt as the node's, and since
 * when (ADR 0007, "Absence is counted only while the view is fresh").
 *
 * The phantom judgement reads two streams: heartbeats (what nodes run) and job reports (what ended).
 * While either stops reaching us (the broker restarts, a consumer rejoins its group, the fleet's beats
 * stop at once), a missing attempt may be one whose beats or final report are merely held up; the
 * gap is ours, not the node's. Each input is a continuity clock: a series of moments (a completed
 * fetch, the newest beat's send time) that is continuous while no two are further apart than its
 * maxGapMs. Absence counts only from the latest moment since which every clock has been continuous.
 */

/** One input of the view. `lastAt` null: not heard since it (re)started. */
export interface ContinuityClock {
  name: string;
  /** The latest moment the input was heard (ms). */
  lastAt: number | null;
  /** Since when it has been heard without a gap longer than maxGapMs (ms). */
  continuousSince: number | null;
  /** Longest gap (and longest silence now) that still counts as continuous, ms. */
  maxGapMs: number;
}

export const newClock = (name: string, maxGapMs: number): ContinuityClock => ({ name, lastAt: null, continuousSince: null, maxGapMs });

/** The clock after the input was heard at `at`; a moment older than the last changes nothing (receive order differs from time order). */
export function heardAt(clock: ContinuityClock, at: number): ContinuityClock {
  if (clock.lastAt !== null && at <= clock.lastAt) return clock;
  const continuous = clock.lastAt !== null && clock.continuousSince !== null && at - clock.lastAt <= clock.maxGapMs;
  return { ...clock, lastAt: at, continuousSince: continuous ? clock.continuousSince : at };
}

/** The input stopped for a reason we know of (its consumer rejoined, crashed): continuity starts again at its next moment. */
export const interrupted = (clock: ContinuityClock): ContinuityClock => ({ ...clock, lastAt: null, continuousSince: null });

export type AbsenceVerdict =
  /** Silence about an attempt may be counted from `since` (never from earlier). */
  | { kind: 'count'; since: number }
  /** The view is stale: no attempt may be judged absent now. */
  | { kind: 'suspended'; reason: string };

/** Since when absence may be counted at `nowMs`, given every input's clock. */
export function absenceCountsFrom(clocks: readonly ContinuityClock[], nowMs: number): AbsenceVerdict {
  let since = Number.NEGATIVE_INFINITY;
  for (const c of clocks) {
    if (c.lastAt === null || c.continuousSince === null) return { kind: 'suspended', reason: `${c.name}: not heard since it (re)started` };
    if (nowMs - c.lastAt > c.maxGapMs) return { kind: 'suspended', reason: `${c.name}: silent for ${nowMs - c.lastAt} ms` };
    since = Math.max(since, c.continuousSince);
  }
  return { kind: 'count', since };
}
