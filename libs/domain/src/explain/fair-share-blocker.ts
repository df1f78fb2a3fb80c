import { FairShareStanding, fairShareKey } from '../fairness/fair-share';

/** A queue of the job's band, or an owner of the job's queue, as explain sees it for fair share (ADR 0038). */
export interface FairShareRival {
  name: string;
  weight: number;
  standing: FairShareStanding;
  /** Whether it has queued jobs: only those compete for capacity that frees. */
  waiting: boolean;
}

/** What explain needs for FAIR_SHARE: the job's band and the owners of its queue, with their standings. */
export interface ExplainFairShare {
  horizonSeconds: number;
  /** Every queue of the job's band, its own included. */
  queues: readonly FairShareRival[];
  owner: string;
  /** Every owner with queued jobs or usage in the job's queue, its own included. */
  owners: readonly FairShareRival[];
}

/** Most rivals a FAIR_SHARE detail names. */
const NAMED_MAX = 3;

/** GPU-hours to three significant figures, trailing zeros dropped. */
const hours = (gpuSeconds: number) => String(Number((gpuSeconds / 3600).toPrecision(3)));

/**
 * FAIR_SHARE: the queues of its band, and the owners of its queue, that wait with a lower fair-share
 * key than the job's own, so capacity that frees goes to them first. Named with their keys
 * (decayed GPU-hours, GPUs held counted over the horizon, per unit of weight) against the job's;
 * null when none is ahead.
 */
export function fairShareBlockerDetail(fs: ExplainFairShare, queue: string): string | null {
  const key = (r: FairShareRival) => fairShareKey(r.standing, r.weight, fs.horizonSeconds);
  const ahead = (rivals: readonly FairShareRival[], mine: string, what: string): string | null => {
    const me = rivals.find((r) => r.name === mine);
    const myKey = me ? key(me) : 0;
    const before = rivals.filter((r) => r.name !== mine && r.waiting && key(r) < myKey).sort((a, b) => key(a) - key(b));
    if (before.length === 0) return null;
    const named = before
      .slice(0, NAMED_MAX)
      .map((r) => `${what} ${r.name} (${hours(key(r))})`)
      .join(', ');
    const more = before.length > NAMED_MAX ? ` and ${before.length - NAMED_MAX} more` : '';
    return `${named}${more} ahead of ${what} ${mine} (${hours(myKey)})`;
  };
  const parts = [ahead(fs.queues, queue, 'queue'), ahead(fs.owners, fs.owner, 'owner')].filter((p): p is string => p !== null);
  if (parts.length === 0) return null;
  return `served first by fair share, in decayed GPU-hours per unit of weight: ${parts.join('; ')}`;
}
