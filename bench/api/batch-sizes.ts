import { scrapeMetrics } from '../heartbeats/prometheus-text';

/**
 * How big the batches of the hot write paths were: every histogram whose name ends in
 * `_per_write`, `_per_commit`, `_per_publish` or `_batch_size`, as sum and count per service.
 * Between two snapshots, sum/count is the mean batch: the statements per job follow from it.
 */
export type BatchSnapshot = Record<string, { sum: number; count: number }>;

const BATCH_METRIC = /^(gantry_\w+(?:_per_write|_per_commit|_per_publish|_batch_size))_(sum|count)$/;

export async function batchSnapshot(services: Array<{ name: string; url: string }>): Promise<BatchSnapshot> {
  const out: BatchSnapshot = {};
  await Promise.all(
    services.map(async ({ name, url }) => {
      for (const s of await scrapeMetrics(url)) {
        const m = BATCH_METRIC.exec(s.name);
        if (!m) continue;
        const key = `${name} ${m[1].replace(/^gantry_/, '')}`;
        out[key] ??= { sum: 0, count: 0 };
        out[key][m[2] as 'sum' | 'count'] += s.value;
      }
    }),
  );
  return out;
}

/** Mean batch per metric between two snapshots, with how many batches there were. */
export function meanBatches(before: BatchSnapshot, after: BatchSnapshot): Record<string, { mean: number; batches: number }> {
  const out: Record<string, { mean: number; batches: number }> = {};
  for (const [k, a] of Object.entries(after)) {
    const b = before[k] ?? { sum: 0, count: 0 };
    const count = a.count - b.count;
    if (count > 0) out[k] = { mean: Math.round(((a.sum - b.sum) / count) * 10) / 10, batches: count };
  }
  return out;
}
