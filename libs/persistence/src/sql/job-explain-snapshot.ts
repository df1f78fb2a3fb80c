import type { NodeCapacity } from '@gantry/domain';
import { JobRecord, toJobRecord } from './job-rows';
import { Sql } from './sql';

/** Most queued jobs ahead that the explain simulation starts before the job (policy order). */
export const EXPLAIN_AHEAD_MAX = 1000;

/** A node's capacity (the domain's NodeCapacity) with what explain also needs of it. */
export interface ExplainNodeRow extends NodeCapacity {
  id: string;
  cordoned: boolean;
}

export interface ExplainRunningRow {
  queue: string;
  nodeIds: string[];
  gpus: number;
  cpuCores: number;
  memoryMiB: number;
  /** When it started, or was placed if it has not yet. */
  startedAt: Date;
  maxRuntimeSeconds: number | null;
}

export interface ExplainRows {
  queues: Array<{ name: string; priority: number; quotaGpus: number | null; heldGpus: number; parent: string | null; borrowingLimitGpus: number }>;
  nodes: ExplainNodeRow[];
  running: ExplainRunningRow[];
  aheadInQueue: number;
  aheadOverall: number;
  /** Queued jobs ahead of it, in policy order (higher bands, then older), at most EXPLAIN_AHEAD_MAX. */
  ahead: JobRecord[];
}

/**
 * What GET /v1/jobs/{id}/explain reads (ADR 0024): every queue with its place in the tree and the
 * GPUs it holds (queue_gpus_held, as the scheduler judges quotas, ADR 0039), every node's
 * capacity and cordon, every live attempt, and the queued jobs ahead of `job`. Several statements,
 * not one snapshot: an explanation is advice, and a few milliseconds of skew between them change
 * nothing a reader could act on. Order "ahead" is band first, then (created_at, id), the order the
 * scheduler's policy starts from (DRF between queues of one band is not modelled).
 */
export async function loadExplainRows(sql: Sql, job: JobRecord): Promise<ExplainRows> {
  const [queues, nodes, running, counts, ahead] = await Promise.all([
    sql.rows<{ name: string; priority: number; quota_gpus: number | null; held: string; parent: string | null; borrowing_limit_gpus: number }>(
      `SELECT q.name, q.priority, q.quota_gpus, q.parent, q.borrowing_limit_gpus, COALESCE(c.gpus, 0) AS held
       FROM queues q LEFT JOIN queue_gpus_held c ON c.queue = q.name ORDER BY q.name`,
    ),
    sql.rows<Record<string, any>>(
      `SELECT id, gpu_model, gpus_total, gpus_allocated, cpu_cores, cpu_allocated, memory_mib, memory_allocated, cordoned FROM nodes ORDER BY id`,
    ),
    sql.rows<Record<string, any>>(
      `SELECT queue, node_ids, gpus, cpu_cores, memory_mib, COALESCE(started_at, updated_at) AS started_at, max_runtime_seconds
       FROM jobs WHERE state IN ('SCHEDULED', 'RUNNING')`,
    ),
    sql.rows<{ in_queue: string; overall: string }>(
      `WITH me AS (SELECT priority FROM queues WHERE name = $1)
       SELECT count(*) FILTER (WHERE j.queue = $1) AS in_queue, count(*) AS overall
       FROM jobs j JOIN queues q ON q.name = j.queue, me
       WHERE j.state = 'QUEUED' AND j.deps_pending = 0 AND j.array_size IS NULL AND j.id <> $4
         AND (q.priority > me.priority OR (q.priority = me.priority AND (j.created_at, j.id) < ($2, $3)))`,
      [job.queue, job.createdAt, job.id, job.id],
    ),
    sql.rows(
      `WITH me AS (SELECT priority FROM queues WHERE name = $1)
       SELECT j.* FROM jobs j JOIN queues q ON q.name = j.queue, me
       WHERE j.state = 'QUEUED' AND j.deps_pending = 0 AND j.array_size IS NULL AND j.id <> $4
         AND (q.priority > me.priority OR (q.priority = me.priority AND (j.created_at, j.id) < ($2, $3)))
       ORDER BY q.priority DESC, j.created_at, j.id LIMIT $5`,
      [job.queue, job.createdAt, job.id, job.id, EXPLAIN_AHEAD_MAX],
    ),
  ]);
  return {
    queues: queues.map((q) => ({
      name: q.name,
      priority: q.priority,
      quotaGpus: q.quota_gpus,
      heldGpus: Number(q.held),
      parent: q.parent,
      borrowingLimitGpus: q.borrowing_limit_gpus,
    })),
    nodes: nodes.map((n) => ({
      id: n.id,
      gpuModel: n.gpu_model,
      gpusTotal: n.gpus_total,
      gpusAllocated: n.gpus_allocated,
      cpuCores: n.cpu_cores,
      cpuAllocated: n.cpu_allocated,
      memoryMiB: Number(n.memory_mib),
      memoryAllocated: Number(n.memory_allocated),
      cordoned: n.cordoned,
    })),
    running: running.map((r) => ({
      queue: r.queue,
      nodeIds: r.node_ids ?? [],
      gpus: r.gpus,
      cpuCores: r.cpu_cores,
      memoryMiB: Number(r.memory_mib),
      startedAt: r.started_at,
      maxRuntimeSeconds: r.max_runtime_seconds,
    })),
    aheadInQueue: Number(counts[0]?.in_queue ?? 0),
    aheadOverall: Number(counts[0]?.overall ?? 0),
    ahead: ahead.map(toJobRecord),
  };
}
