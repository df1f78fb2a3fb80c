import { UsageGranularity, bucketStart, clipIntoBuckets } from './usage-buckets';

/**
 * A usage report's rows (contract 5.4, ADR 0037), built from two kinds of input: cells already
 * summed per bucket (the hourly rollup, regrouped) and held intervals (ranks not folded yet, and
 * ranks still running, up to the report's end). GPU- and CPU-time is kept in whole milliseconds so
 * that every sum is exact. An attempt counts once, in the bucket where it started (its rank 0's
 * start), and a job once, in the bucket where its first attempt started: both add up over splits.
 */

export const USAGE_GROUP_KEYS = ['owner', 'queue', 'gpuModel'] as const;
export type UsageGroupKey = (typeof USAGE_GROUP_KEYS)[number];

/** What a row is grouped by; a key not grouped by is null in every row. */
export interface UsageGroup {
  owner: string | null;
  queue: string | null;
  gpuModel: string | null;
}

/** One bucket of one group, summed. */
export interface UsageCell extends UsageGroup {
  /** Bucket start, ms since the epoch (UTC). */
  start: number;
  gpuMs: number;
  cpuMs: number;
  attempts: number;
  jobs: number;
}

/** What one rank held from `startMs` to `endMs` (or up to now, still running). */
export interface HeldInterval {
  owner: string;
  queue: string;
  /** The GPU model of the rank's node; null without one. */
  gpuModel: string | null;
  gpus: number;
  cpuCores: number;
  attempt: number;
  rank: number;
  startMs: number;
  endMs: number;
}

export interface UsageRange {
  fromMs: number;
  toMs: number;
  granularity: UsageGranularity;
  groupBy: readonly UsageGroupKey[];
}

/** Sums cells and intervals into a report's rows, in bucket then group order. */
export class UsageReportBuilder {
  private readonly cells = new Map<string, UsageCell>();

  constructor(private readonly range: UsageRange) {}

  /**
   * A cell summed over a part of the range (rollup hours inside it, perhaps already summed per
   * bucket): regrouped into this report's bucket and groups. The caller keeps to the range: a
   * month's cell starts before a range that starts mid-month.
   */
  addCell(cell: UsageCell): void {
    const into = this.cell(bucketStart(cell.start, this.range.granularity), cell);
    into.gpuMs += cell.gpuMs;
    into.cpuMs += cell.cpuMs;
    into.attempts += cell.attempts;
    into.jobs += cell.jobs;
  }

  addInterval(held: HeldInterval): void {
    const { fromMs, toMs, granularity } = this.range;
    for (const share of clipIntoBuckets(held.startMs, held.endMs, fromMs, toMs, granularity)) {
      const into = this.cell(share.start, held);
      into.gpuMs += held.gpus * share.ms;
      into.cpuMs += held.cpuCores * share.ms;
    }
    if (held.rank === 0 && held.startMs >= fromMs && held.startMs < toMs) {
      const into = this.cell(bucketStart(held.startMs, granularity), held);
      into.attempts += 1;
      if (held.attempt === 1) into.jobs += 1;
    }
  }

  rows(): UsageCell[] {
    const key = (c: UsageCell) => [c.owner ?? '', c.queue ?? '', c.gpuModel ?? ''];
    return [...this.cells.values()].sort((a, b) => {
      if (a.start !== b.start) return a.start - b.start;
      const [ka, kb] = [key(a), key(b)];
      for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
      return 0;
    });
  }

  private cell(start: number, of: UsageGroup): UsageCell {
    const by = this.range.groupBy;
    const group: UsageGroup = {
      owner: by.includes('owner') ? of.owner : null,
      queue: by.includes('queue') ? of.queue : null,
      gpuModel: by.includes('gpuModel') ? of.gpuModel : null,
    };
    const k = JSON.stringify([start, group.owner, group.queue, group.gpuModel]);
    let c = this.cells.get(k);
    if (!c) this.cells.set(k, (c = { start, ...group, gpuMs: 0, cpuMs: 0, attempts: 0, jobs: 0 }));
    return c;
  }
}
