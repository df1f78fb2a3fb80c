import { capArrayParallelism } from '@gantry/domain';
import { QueuedJobHead, Sql, countActiveArrayChildren } from '@gantry/persistence';

export interface ParallelismHold {
  /** The queue heads the cycle may place. */
  jobs: QueuedJobHead[];
  /** Array children left waiting, with pendingReason ARRAY_PARALLELISM. */
  held: Array<{ jobId: string; reason: string }>;
}

/**
 * Holds back the children of arrays that already have `parallelism` children placed (ADR 0025):
 * one read of the running count of the arrays among the queue heads (jobs_active_by_array), then
 * capArrayParallelism. A cycle with no capped array child among its heads reads nothing.
 */
export async function holdArraysAtParallelism(sql: Sql, heads: QueuedJobHead[]): Promise<ParallelismHold> {
  const arrays = [...new Set(heads.filter((j) => j.arrayOf !== null && j.arrayParallelism !== null).map((j) => j.arrayOf!))];
  if (arrays.length === 0) return { jobs: heads, held: [] };
  const cut = capArrayParallelism(heads, await countActiveArrayChildren(sql, arrays));
  return { jobs: cut.admitted, held: cut.held };
}
