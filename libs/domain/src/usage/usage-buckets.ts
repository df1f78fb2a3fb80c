/**
 * Usage report buckets (contract 5.4, ADR 0037): UTC hours, days or calendar months. A bucket's
 * usage is the part of each held interval that falls inside both the bucket and the report's range,
 * counted in whole milliseconds, so the buckets of any split of a range add up to the range's.
 */

export const USAGE_GRANULARITIES = ['hour', 'day', 'month'] as const;
export type UsageGranularity = (typeof USAGE_GRANULARITIES)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The start (ms since the epoch, UTC) of the bucket that holds `ms`. */
export function bucketStart(ms: number, granularity: UsageGranularity): number {
  switch (granularity) {
    case 'hour':
      return Math.floor(ms / HOUR_MS) * HOUR_MS;
    case 'day':
      return Math.floor(ms / DAY_MS) * DAY_MS;
    case 'month': {
      const d = new Date(ms);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    }
  }
}

/** The start of the bucket after the one that starts at or holds `ms`. */
export function nextBucketStart(ms: number, granularity: UsageGranularity): number {
  switch (granularity) {
    case 'hour':
      return bucketStart(ms, 'hour') + HOUR_MS;
    case 'day':
      return bucketStart(ms, 'day') + DAY_MS;
    case 'month': {
      const d = new Date(ms);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
  }
}

/** How many buckets [fromMs, toMs) touches. */
export function bucketCount(fromMs: number, toMs: number, granularity: UsageGranularity): number {
  let n = 0;
  for (let t = bucketStart(fromMs, granularity); t < toMs; t = nextBucketStart(t, granularity)) n++;
  return n;
}

/** One bucket's share of a held interval: milliseconds held inside it. */
export interface BucketShare {
  start: number;
  ms: number;
}

/**
 * The interval [startMs, endMs) clipped to [fromMs, toMs) and cut at bucket boundaries: one share
 * per bucket it touches, none empty. The shares add up to the clipped interval's length exactly.
 */
export function clipIntoBuckets(startMs: number, endMs: number, fromMs: number, toMs: number, granularity: UsageGranularity): BucketShare[] {
  const lo = Math.max(startMs, fromMs);
  const hi = Math.min(endMs, toMs);
  const shares: BucketShare[] = [];
  for (let t = lo; t < hi;) {
    const next = Math.min(nextBucketStart(t, granularity), hi);
    shares.push({ start: bucketStart(t, granularity), ms: next - t });
    t = next;
  }
  return shares;
}
