import { QueueLimits, cohortHeld, judgeQuota } from './quota-tree';

/** A running attempt of a cohort member that reclaim may end. */
export interface BorrowingAttempt {
  jobId: string;
  queue: string;
  /** Every GPU the attempt holds (a gang counts every rank). */
  gpus: number;
  /** When it was placed (ms): the newest borrowed work goes first. */
  placedAt: number;
}

/**
 * Which borrowed attempts a lender's job may preempt to get its guarantee back (ADR 0039): the job
 * must be within its queue's guarantee once placed, and held only by its cohort's limit, which the
 * siblings' borrowing fills. Victims are attempts of members holding more than their guarantee,
 * newest first (the least work lost), each taken only while its queue is still above its guarantee,
 * until the job fits the cohort. Null when the job is not entitled to reclaim or borrowed work cannot
 * make room. `candidates` should leave out attempts already stopping or in their cooldown (ADR 0026).
 */
export function chooseReclaimVictims(
  limits: QueueLimits,
  held: ReadonlyMap<string, number>,
  ask: { queue: string; gpus: number },
  candidates: readonly BorrowingAttempt[],
): string[] | null {
  const cohort = limits.cohortOf.get(ask.queue);
  const guarantee = limits.guarantee.get(ask.queue);
  if (cohort === undefined || guarantee === undefined) return null;
  if ((held.get(ask.queue) ?? 0) + ask.gpus > guarantee) return null;
  if (judgeQuota(limits, held, ask.queue, ask.gpus) !== 'COHORT_LIMIT') return null;
  const after = new Map(held);
  let over = cohortHeld(limits, held, cohort) + ask.gpus - limits.cohortCap.get(cohort)!;
  const victims: string[] = [];
  const newestFirst = candidates
    .filter((c) => c.queue !== ask.queue && limits.cohortOf.get(c.queue) === cohort && c.gpus > 0)
    .sort((a, b) => b.placedAt - a.placedAt || (a.jobId < b.jobId ? -1 : 1));
  for (const c of newestFirst) {
    if (over <= 0) break;
    const h = after.get(c.queue) ?? 0;
    if (h <= limits.guarantee.get(c.queue)!) continue;
    after.set(c.queue, h - c.gpus);
    over -= c.gpus;
    victims.push(c.jobId);
  }
  return over <= 0 ? victims : null;
}
