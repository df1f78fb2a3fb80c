import { USAGE_GROUP_KEYS, UsageCell, UsageGroupKey } from './usage-report';

/** A usage row as the API returns it (GET /v1/usage): only the grouped-by keys are present. */
export interface UsageRowView {
  /** The bucket's start, ISO 8601 UTC. */
  start: string;
  owner?: string;
  queue?: string;
  /** Null: ranks on nodes without GPUs. */
  gpuModel?: string | null;
  /** Exact to the millisecond (at most three decimals). */
  gpuSeconds: number;
  cpuSeconds: number;
  attempts: number;
  jobs: number;
}

export function toUsageRowView(cell: UsageCell, groupBy: readonly UsageGroupKey[]): UsageRowView {
  const row: UsageRowView = { start: new Date(cell.start).toISOString(), gpuSeconds: 0, cpuSeconds: 0, attempts: 0, jobs: 0 };
  for (const k of USAGE_GROUP_KEYS) {
    if (!groupBy.includes(k)) continue;
    if (k === 'gpuModel') row.gpuModel = cell.gpuModel;
    else row[k] = cell[k] ?? '';
  }
  // Built after the keys so that JSON shows start, the keys, then the sums.
  return { ...row, gpuSeconds: cell.gpuMs / 1000, cpuSeconds: cell.cpuMs / 1000, attempts: cell.attempts, jobs: cell.jobs };
}
