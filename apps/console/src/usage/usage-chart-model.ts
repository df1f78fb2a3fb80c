import type { UsageRow } from '@gantry/client';

/** One owner's GPU-hours per bucket, in the chart's bucket order. */
export interface UsageSeries {
  owner: string;
  gpuHours: number[];
  total: number;
}

/** GPU-hours by owner over time: what the usage page's stacked bars draw. Pure. */
export interface UsageChartModel {
  /** Bucket starts (ISO), oldest first: every bucket that has a row. */
  buckets: string[];
  /** Largest first, so the biggest user sits at the bottom of each bar and first in the legend. */
  series: UsageSeries[];
  /** The tallest bar's height, GPU-hours (at least 1, so an empty chart still has a scale). */
  max: number;
}

/** Rows grouped by owner (GET /v1/usage?groupBy=owner) as stacked series. */
export function usageChartModel(rows: readonly UsageRow[]): UsageChartModel {
  const buckets = [...new Set(rows.map((r) => r.start))].sort();
  const index = new Map(buckets.map((b, i) => [b, i]));
  const byOwner = new Map<string, number[]>();
  for (const r of rows) {
    const owner = r.owner ?? '';
    if (!byOwner.has(owner))
      byOwner.set(
        owner,
        buckets.map(() => 0),
      );
    byOwner.get(owner)![index.get(r.start)!] += r.gpuSeconds / 3600;
  }
  const series = [...byOwner.entries()]
    .map(([owner, gpuHours]) => ({ owner, gpuHours, total: gpuHours.reduce((s, v) => s + v, 0) }))
    .sort((a, b) => b.total - a.total || (a.owner < b.owner ? -1 : 1));
  const heights = buckets.map((_, i) => series.reduce((s, x) => s + x.gpuHours[i], 0));
  return { buckets, series, max: Math.max(1, ...heights) };
}
