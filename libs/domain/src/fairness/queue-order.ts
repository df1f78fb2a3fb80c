import { ResourceRequest } from '../resources/resources';
import { FairShareInput } from './fair-share';
import { FairSharePicker } from './fair-share-picker';
import { judgeQuota, queueLimits } from './quota-tree';

/** A queue as the scheduler sees it at the start of a cycle. */
export interface QueueShareState {
  name: string;
  /** Higher bands are served first (0..100). */
  priority: number;
  /** DRF weight: a queue with weight 2 is entitled to twice the dominant share. */
  weight: number;
  /** Hard cap on GPUs held at once, or a child's guarantee (quota-tree.ts); null = unlimited / none. */
  quotaGpus: number | null;
  /** The queue's parent, whose cohort it borrows in (quota-tree.ts); absent or null: none. */
  parent?: string | null;
  /** GPUs a child may hold beyond its guarantee; absent: 0. */
  borrowingLimitGpus?: number;
  /** What its live attempts hold now. */
  held: { gpus: number; cpuCores: number; memoryMiB: number };
  /** Owners' weights inside the queue for decayed fair share; an owner not named weighs 1. */
  ownerWeights?: Readonly<Record<string, number>> | null;
}

export interface QueuedJob {
  id: string;
  queue: string;
  /** Who submitted it: decayed fair share orders owners inside a queue. */
  owner?: string;
  resources: ResourceRequest;
  nodes: number;
  /** Nodes where an attempt of the job failed to start (ADR 0035): placement goes elsewhere when it can. */
  avoidNodeIds?: readonly string[];
}

export interface ClusterCapacity {
  gpus: number;
  cpuCores: number;
  memoryMiB: number;
}

export interface QueueOrder {
  /** Jobs in the order placement should try them. */
  ordered: QueuedJob[];
  /** Jobs held back by policy, with why. */
  held: Array<{ jobId: string; reason: 'QUOTA_EXCEEDED' }>;
}

const demand = (j: QueuedJob) => ({
  gpus: j.resources.gpus * j.nodes,
  cpuCores: j.resources.cpuCores * j.nodes,
  memoryMiB: j.resources.memoryMiB * j.nodes,
});

/** Dominant Resource Fairness: a queue's largest share of any resource, divided by its weight. */
export function dominantShare(held: QueueShareState['held'], total: ClusterCapacity, weight: number): number {
  const share = (used: number, cap: number) => (cap > 0 ? used / cap : 0);
  return Math.max(share(held.gpus, total.gpus), share(held.cpuCores, total.cpuCores), share(held.memoryMiB, total.memoryMiB)) / Math.max(weight, 1e-9);
}

/**
 * Orders queued jobs for placement: strict priority bands (higher first); within a band, with
 * `fairShare`, the queue with the lowest decayed fair-share key goes next and, inside it, the owner
 * with the lowest key, FIFO within an owner (FairSharePicker, ADR 0038), weighted DRF breaking ties;
 * without it (GANTRY_SCHEDULER_FAIRNESS=drf), the queue with the lowest weighted dominant share goes
 * next, FIFO within a queue. Either way a pick counts as placed for the next one. A job that would
 * take its queue past its GPU quota, or its cohort past the cohort's guarantee (quota-tree.ts), is
 * held, and the queue's later jobs are still considered (up to `lookahead` per queue), so one large
 * job does not block a queue whose smaller jobs fit its quota.
 */
export function orderByPolicy(jobs: QueuedJob[], queues: QueueShareState[], total: ClusterCapacity, lookahead: number, fairShare?: FairShareInput): QueueOrder {
  const byQueue = new Map<string, QueuedJob[]>();
  for (const j of jobs) {
    const list = byQueue.get(j.queue);
    if (list) list.push(j);
    else byQueue.set(j.queue, [j]);
  }
  const fair = fairShare ? new FairSharePicker(fairShare, queues, byQueue, lookahead) : undefined;
  const state = new Map(queues.map((q) => [q.name, { ...q, held: { ...q.held } }]));
  const result: QueueOrder = { ordered: [], held: [] };
  const limits = queueLimits(
    queues.map((q) => ({ name: q.name, parent: q.parent ?? null, quotaGpus: q.quotaGpus, borrowingLimitGpus: q.borrowingLimitGpus ?? 0 })),
  );
  const heldGpus = new Map(queues.map((q) => [q.name, q.held.gpus]));
  const bands = [...new Set(queues.map((q) => q.priority))].sort((a, b) => b - a);
  for (const band of bands) {
    const names = queues.filter((q) => q.priority === band && byQueue.has(q.name)).map((q) => q.name);
    const cursors = new Map(names.map((n) => [n, 0]));
    for (;;) {
      const open = names.filter((n) => cursors.get(n)! < Math.min(lookahead, byQueue.get(n)!.length));
      if (open.length === 0) break;
      open.sort((a, b) => {
        const qa = state.get(a)!;
        const qb = state.get(b)!;
        return (fair?.compareQueues(a, b) ?? 0) || dominantShare(qa.held, total, qa.weight) - dominantShare(qb.held, total, qb.weight) || (a < b ? -1 : 1);
      });
      const name = open[0];
      const q = state.get(name)!;
      const job = fair ? fair.take(name)! : byQueue.get(name)![cursors.get(name)!];
      cursors.set(name, cursors.get(name)! + 1);
      const d = demand(job);
      if (judgeQuota(limits, heldGpus, name, d.gpus) !== 'ADMIT') {
        result.held.push({ jobId: job.id, reason: 'QUOTA_EXCEEDED' });
        continue;
      }
      heldGpus.set(name, (heldGpus.get(name) ?? 0) + d.gpus);
      q.held = { gpus: q.held.gpus + d.gpus, cpuCores: q.held.cpuCores + d.cpuCores, memoryMiB: q.held.memoryMiB + d.memoryMiB };
      fair?.charge(job);
      result.ordered.push(job);
    }
  }
  return result;
}
