import { ExplainSnapshot, PlacementNode, QueueShareState, RankRun, allocate, explainJob, planCycle } from '@gantry/domain';
import { ReplayJob, ReplayQueue } from './workload';

/**
 * Replays a workload through the scheduler's own decision (planCycle: policy order, DRF, quotas,
 * best fit, gangs, one reservation with runtime backfill, GANTRY_SCHEDULER_BACKFILL=runtime) on an in-process fleet, and asks explainJob for each job's
 * estimatedStartAt at the moment it is submitted, with the snapshot the gateway would read
 * (loadExplainRows: every node, every live attempt, the queued jobs ahead in band-then-age order,
 * at most EXPLAIN_AHEAD_MAX). A cycle runs at every arrival and every end, as the scheduler wakes
 * on new work and on capacity; its own latency (milliseconds) is not modelled.
 */

export interface FleetOptions {
  nodes: number;
  gpusPerNode: number;
  cpuCores: number;
  memoryMiB: number;
  racks: number;
}

export interface Sample {
  id: string;
  queue: string;
  submitAtMs: number;
  /** 1-based, as explain reports it. */
  positionOverall: number;
  positionQueue: number;
  estimatedStartAtMs: number | null;
  actualStartAtMs: number;
}

/** The gateway's bound on the jobs ahead it reads (libs/persistence EXPLAIN_AHEAD_MAX). */
const AHEAD_MAX = 1000;
/** The scheduler's defaults (apps/scheduler config). */
const LOOKAHEAD = 1000;
const BATCH = 1000;

interface Live {
  job: ReplayJob;
  nodeIds: string[];
  gpuIndices: number[][];
  startMs: number;
  endMs: number;
}

export function replay(jobs: readonly ReplayJob[], queues: readonly ReplayQueue[], fleet: FleetOptions): Sample[] {
  const nodes: PlacementNode[] = Array.from({ length: fleet.nodes }, (_, i) => ({
    id: `node-${String(i).padStart(4, '0')}`,
    rack: `rack-${i % fleet.racks}`,
    health: 'HEALTHY',
    cordoned: false,
    version: 0,
    gpuModel: 'H100',
    gpusTotal: fleet.gpusPerNode,
    gpusAllocated: 0,
    cpuCores: fleet.cpuCores,
    cpuAllocated: 0,
    memoryMiB: fleet.memoryMiB,
    memoryAllocated: 0,
    gpusHeld: [],
  }));
  const band = new Map(queues.map((q) => [q.name, q.priority]));
  const queued: ReplayJob[] = [];
  const live = new Map<string, Live>();
  const pending = new Map<string, Omit<Sample, 'actualStartAtMs'>>();
  const samples: Sample[] = [];
  const request = (j: ReplayJob) => ({ gpus: j.gpus, gpuModel: 'H100', cpuCores: j.cpuCores, memoryMiB: j.memoryMiB });

  const heldBy = (queue: string) => {
    const held = { gpus: 0, cpuCores: 0, memoryMiB: 0 };
    for (const l of live.values()) {
      if (l.job.queue !== queue) continue;
      held.gpus += l.job.gpus * l.job.nodes;
      held.cpuCores += l.job.cpuCores * l.job.nodes;
      held.memoryMiB += l.job.memoryMiB * l.job.nodes;
    }
    return held;
  };

  /** What GET /v1/jobs/{id}/explain would answer for `job` at `now`. */
  const explain = (job: ReplayJob, now: number) => {
    const mine = band.get(job.queue)!;
    const ahead = queued
      .filter((j) => j.id !== job.id && (band.get(j.queue)! > mine || (band.get(j.queue) === mine && j.submitAtMs <= job.submitAtMs)))
      .sort((a, b) => band.get(b.queue)! - band.get(a.queue)! || a.submitAtMs - b.submitAtMs || a.id.localeCompare(b.id));
    const snapshot: ExplainSnapshot = {
      nowMs: now,
      job: {
        queue: job.queue,
        nodes: job.nodes,
        request: request(job),
        pendingReason: null,
        depsPending: 0,
        notBeforeMs: null,
        maxRuntimeSeconds: job.maxRuntimeSeconds,
      },
      queues: queues.map((q) => ({ name: q.name, priority: q.priority, quotaGpus: q.quotaGpus, heldGpus: heldBy(q.name).gpus })),
      nodes: nodes.map((n) => ({ ...n })),
      running: [...live.values()].map((l) => ({
        queue: l.job.queue,
        nodeIds: l.nodeIds,
        perNode: { gpus: l.job.gpus, cpuCores: l.job.cpuCores, memoryMiB: l.job.memoryMiB },
        startedAtMs: l.startMs,
        maxRuntimeSeconds: l.job.maxRuntimeSeconds,
      })),
      aheadInQueue: ahead.filter((j) => j.queue === job.queue).length,
      aheadOverall: ahead.length,
      ahead: ahead.slice(0, AHEAD_MAX).map((j) => ({ queue: j.queue, nodes: j.nodes, request: request(j), maxRuntimeSeconds: j.maxRuntimeSeconds })),
    };
    return explainJob(snapshot);
  };

  const cycle = (now: number) => {
    const heads: ReplayJob[] = [];
    const perQueue = new Map<string, number>();
    for (const j of queued) {
      const n = perQueue.get(j.queue) ?? 0;
      if (n < LOOKAHEAD) heads.push(j);
      perQueue.set(j.queue, n + 1);
    }
    const shares: QueueShareState[] = queues.map((q) => ({ name: q.name, priority: q.priority, weight: 1, quotaGpus: q.quotaGpus, held: heldBy(q.name) }));
    // Runtime backfill reads the ranks on reserved nodes; here every node's are at hand.
    const runs = new Map<string, RankRun[]>(nodes.map((n) => [n.id, []]));
    for (const l of live.values()) {
      for (const id of l.nodeIds)
        runs
          .get(id)!
          .push({ gpus: l.job.gpus, cpuCores: l.job.cpuCores, memoryMiB: l.job.memoryMiB, startedAtMs: l.startMs, maxRuntimeSeconds: l.job.maxRuntimeSeconds });
    }
    const plan = planCycle({
      jobs: heads.map((j) => ({ id: j.id, queue: j.queue, resources: request(j), nodes: j.nodes, maxRuntimeSeconds: j.maxRuntimeSeconds })),
      queues: shares,
      nodes,
      lookahead: LOOKAHEAD,
      batchSize: BATCH,
      backfill: { nowMs: now, runs },
    });
    if (plan.plan.placements.length === 0) return;
    const byId = new Map(nodes.map((n, i) => [n.id, i]));
    const placed = new Set<string>();
    for (const p of plan.plan.placements) {
      const job = queued.find((j) => j.id === p.jobId)!;
      p.nodeIds.forEach((id, rank) => {
        const i = byId.get(id)!;
        nodes[i] = { ...allocate(nodes[i], request(job)), gpusHeld: [...(nodes[i].gpusHeld ?? []), ...p.gpuIndices[rank]] };
      });
      live.set(job.id, { job, nodeIds: p.nodeIds, gpuIndices: p.gpuIndices, startMs: now, endMs: now + job.actualRuntimeSeconds * 1000 });
      samples.push({ ...pending.get(job.id)!, actualStartAtMs: now });
      pending.delete(job.id);
      placed.add(job.id);
    }
    for (let i = queued.length - 1; i >= 0; i--) if (placed.has(queued[i].id)) queued.splice(i, 1);
  };

  const end = (l: Live) => {
    const byId = new Map(nodes.map((n, i) => [n.id, i]));
    l.nodeIds.forEach((id, rank) => {
      const i = byId.get(id)!;
      const n = nodes[i];
      const freed = new Set(l.gpuIndices[rank]);
      nodes[i] = {
        ...n,
        gpusAllocated: n.gpusAllocated - l.job.gpus,
        cpuAllocated: n.cpuAllocated - l.job.cpuCores,
        memoryAllocated: n.memoryAllocated - l.job.memoryMiB,
        gpusHeld: (n.gpusHeld ?? []).filter((g) => !freed.has(g)),
      };
    });
    live.delete(l.job.id);
  };

  let next = 0;
  while (next < jobs.length || queued.length > 0) {
    const nextArrival = next < jobs.length ? jobs[next].submitAtMs : Infinity;
    let nextEnd = Infinity;
    for (const l of live.values()) nextEnd = Math.min(nextEnd, l.endMs);
    const now = Math.min(nextArrival, nextEnd);
    if (now === Infinity) throw new Error(`replay stuck with ${queued.length} queued jobs that can never start`);
    for (const l of [...live.values()]) if (l.endMs <= now) end(l);
    while (next < jobs.length && jobs[next].submitAtMs === now) {
      const job = jobs[next++];
      queued.push(job);
      const e = explain(job, now);
      pending.set(job.id, {
        id: job.id,
        queue: job.queue,
        submitAtMs: now,
        positionOverall: e.position.overall,
        positionQueue: e.position.queue,
        estimatedStartAtMs: e.estimatedStartAtMs,
      });
    }
    cycle(now);
  }
  return samples;
}
