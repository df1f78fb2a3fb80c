import { FairShareInput } from '../fairness/fair-share';
import { ClusterCapacity, QueueOrder, QueueShareState, QueuedJob, orderByPolicy } from '../fairness/queue-order';
import { BackfillInput } from './backfill-window';
import { PlacementPlan, PlanOptions, planPlacements } from './placement';
import { PlacementNode, schedulable } from './schedulable';

/** What one scheduling cycle decides from: its snapshot of queued jobs, queues and nodes. */
export interface CycleInput {
  /** The head of every queue, oldest first: at most `lookahead` jobs of each; maxRuntimeSeconds for runtime backfill. */
  jobs: ReadonlyArray<QueuedJob & { maxRuntimeSeconds?: number | null }>;
  queues: readonly QueueShareState[];
  nodes: PlacementNode[];
  /** Jobs read from the head of each queue. */
  lookahead: number;
  /** Most jobs one cycle plans, in policy order; the rest keep their place until the next cycle. */
  batchSize: number;
  /** The fit index and gang candidates of `nodes`, kept between cycles (see PlanOptions). */
  indexes?: Pick<PlanOptions, 'index' | 'gangs'>;
  /** Nodes where preempted attempts are still stopping: no job is placed there this cycle (see PlanOptions). */
  withheld?: ReadonlySet<string>;
  /** schedulableCapacity(nodes), where the caller keeps it up to date itself (a pass over 50,000 nodes per cycle otherwise). */
  capacity?: ClusterCapacity;
  /** Runtime-aware backfill (PlanOptions.backfill); absent: strict. */
  backfill?: BackfillInput;
  /** Decayed usage per queue and owner (ADR 0038); absent: DRF alone orders a band (GANTRY_SCHEDULER_FAIRNESS=drf). */
  fairShare?: FairShareInput;
}

export interface CyclePlan {
  order: QueueOrder;
  plan: PlacementPlan;
  /** Every job of the batch or held by policy that waits, with why: its pending reason. */
  pendingReasons: Array<{ jobId: string; reason: string }>;
  /** Some queue had more jobs than the cycle looked at, or the batch cut the order: a cycle that placed some should run again at once. */
  moreQueued: boolean;
}

/** What DRF shares are shares of: the capacity of every node that takes new work. */
export function schedulableCapacity(nodes: readonly PlacementNode[]): ClusterCapacity {
  const total = { gpus: 0, cpuCores: 0, memoryMiB: 0 };
  for (const n of nodes) {
    if (!schedulable(n)) continue;
    total.gpus += n.gpusTotal;
    total.cpuCores += n.cpuCores;
    total.memoryMiB += n.memoryMiB;
  }
  return total;
}

/** Whether some queue filled the lookahead: there may be more behind it. */
export function lookaheadFilled(jobs: readonly QueuedJob[], lookahead: number): boolean {
  const perQueue = new Map<string, number>();
  for (const j of jobs) {
    const n = (perQueue.get(j.queue) ?? 0) + 1;
    if (n >= lookahead) return true;
    perQueue.set(j.queue, n);
  }
  return false;
}

/**
 * One cycle's decision: policy orders the jobs (priority bands, decayed fair share or DRF, quotas, ADR 0008, 0038), the first
 * `batchSize` of that order are fitted to the nodes (best fit, gangs, one reservation), and every
 * job that waits gets its reason. The band rides along with each job, so a lower band kept off
 * capacity by a higher one is told PRIORITY.
 */
export function planCycle(input: CycleInput): CyclePlan {
  const order = orderByPolicy([...input.jobs], [...input.queues], input.capacity ?? schedulableCapacity(input.nodes), input.lookahead, input.fairShare);
  const band = new Map(input.queues.map((q) => [q.name, q.priority]));
  const batch = order.ordered.slice(0, input.batchSize);
  // Looked up by id rather than trusted to ride through the policy's order on the same objects.
  const runtime = input.backfill ? new Map(input.jobs.map((j) => [j.id, j.maxRuntimeSeconds ?? null])) : null;
  const plan = planPlacements(
    batch.map((j) => ({ ...j, band: band.get(j.queue) ?? 0, ...(runtime ? { maxRuntimeSeconds: runtime.get(j.id) ?? null } : {}) })),
    input.nodes,
    { ...input.indexes, withheld: input.withheld, backfill: input.backfill },
  );
  return {
    order,
    plan,
    pendingReasons: [...order.held, ...plan.pending].map((p) => ({ jobId: p.jobId, reason: p.reason })),
    moreQueued: lookaheadFilled(input.jobs, input.lookahead) || order.ordered.length > batch.length,
  };
}
