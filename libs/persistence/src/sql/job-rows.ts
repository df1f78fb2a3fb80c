import type { JobState, RankState } from '@gantry/domain';
import { ConcurrentUpdateError, Sql, prepared } from './sql';
import { USAGE_GPU_MODEL } from './usage-ledger';

/** A row of `jobs`, as toJobRecord maps it (bigints as numbers). */
export interface JobRecord {
  id: string;
  owner: string;
  queue: string;
  name: string;
  image: string;
  command: string[];
  env: Record<string, string>;
  labels: Record<string, string>;
  gpus: number;
  gpuModel: string | null;
  cpuCores: number;
  memoryMiB: number;
  nodes: number;
  maxRetries: number;
  state: JobState;
  cancelRequested: boolean;
  attempt: number;
  nodeIds: string[];
  /** The current attempt's GPU devices, rank by rank: rank i holds entries i*gpus .. (i+1)*gpus - 1. */
  gpuIndices: number[];
  /** Rank 0's node address when the current attempt was placed (null: the node never said). */
  masterAddr: string | null;
  /** Longest an attempt may run, seconds; null: no limit. */
  maxRuntimeSeconds: number | null;
  /** Retry policy (ADR 0022): the first backoff ceiling and the largest, seconds; exit codes retried. */
  backoffSeconds: number;
  maxBackoffSeconds: number;
  retryOnExitCodes: number[];
  /** Not placed before this (a retry's backoff); null: no wait. */
  notBefore: Date | null;
  /** Dependencies not met yet (ADR 0023); the scheduler reads only jobs with none. */
  depsPending: number;
  /** Attempts ended by a drain: they used no retry. */
  retriesForgiven: number;
  /** An array's parent (ADR 0025): how many children, and how many may be placed at once (null: no cap). */
  arraySize: number | null;
  arrayParallelism: number | null;
  /** An array's child: its parent and its index (GANTRY_ARRAY_INDEX); it carries the parent's parallelism too. */
  arrayOf: string | null;
  arrayIndex: number | null;
  /** The attempt told to stop for a preemptor and not yet stopped (ADR 0026); null: none. */
  preemptedAttempt: number | null;
  /** The job that attempt stops for. */
  preemptedFor: string | null;
  /** When it was last told to stop for a preemptor (the cooldown counts from here). */
  lastPreemptedAt: Date | null;
  /** Nodes where an attempt of the job timed out starting (START_TIMEOUT): placement avoids them while others fit (ADR 0035). */
  startFailedOn: string[];
  pendingReason: string | null;
  exitCode: number | null;
  reason: string | null;
  /** Compare-and-set version: every state change bumps it. */
  version: number;
  lastEventSeq: number;
  traceParent: string | null;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export function toJobRecord(r: Record<string, any>): JobRecord {
  return {
    id: r.id,
    owner: r.owner,
    queue: r.queue,
    name: r.name,
    image: r.image,
    command: r.command,
    env: r.env,
    labels: r.labels,
    gpus: r.gpus,
    gpuModel: r.gpu_model,
    cpuCores: r.cpu_cores,
    memoryMiB: Number(r.memory_mib),
    nodes: r.nodes,
    maxRetries: r.max_retries,
    state: r.state,
    cancelRequested: r.cancel_requested,
    attempt: r.attempt,
    nodeIds: r.node_ids ?? [],
    gpuIndices: r.gpu_indices ?? [],
    masterAddr: r.master_addr ?? null,
    maxRuntimeSeconds: r.max_runtime_seconds ?? null,
    backoffSeconds: r.backoff_seconds,
    maxBackoffSeconds: r.max_backoff_seconds,
    retryOnExitCodes: r.retry_on_exit_codes ?? [],
    notBefore: r.not_before ?? null,
    depsPending: r.deps_pending ?? 0,
    retriesForgiven: r.retries_forgiven ?? 0,
    arraySize: r.array_size ?? null,
    arrayParallelism: r.array_parallelism ?? null,
    arrayOf: r.array_of ?? null,
    arrayIndex: r.array_index ?? null,
    startFailedOn: r.start_failed_on ?? [],
    preemptedAttempt: r.preempted_attempt ?? null,
    preemptedFor: r.preempted_for ?? null,
    lastPreemptedAt: r.last_preempted_at ?? null,
    pendingReason: r.pending_reason,
    exitCode: r.exit_code,
    reason: r.reason,
    version: Number(r.version),
    lastEventSeq: r.last_event_seq,
    traceParent: r.trace_parent,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

export interface NewJob {
  id: string;
  owner: string;
  queue: string;
  name: string;
  image: string;
  command: string[];
  env: Record<string, string>;
  labels: Record<string, string>;
  gpus: number;
  gpuModel: string | null;
  cpuCores: number;
  memoryMiB: number;
  nodes: number;
  maxRetries: number;
  traceParent: string | null;
  createdAt: Date;
  /** Longest an attempt may run, seconds; absent or null: no limit. */
  maxRuntimeSeconds?: number | null;
  /** The rest of the retry policy (ADR 0022); absent: the defaults, no exit code retried. */
  backoffSeconds?: number;
  maxBackoffSeconds?: number;
  retryOnExitCodes?: number[];
  /** Dependencies not met yet at creation (ADR 0023): the job waits (DEPENDENCY) until none are. */
  depsPending?: number;
  /** An array's parent (ADR 0025): its children are written by insertArrayChildren in the same transaction. */
  arraySize?: number | null;
  arrayParallelism?: number | null;
}

export async function findJob(sql: Sql, id: string): Promise<JobRecord | null> {
  const [row] = await sql.rows(`SELECT * FROM jobs WHERE id = $1`, [id]);
  return row ? toJobRecord(row) : null;
}

export async function findJobs(sql: Sql, ids: string[]): Promise<JobRecord[]> {
  if (ids.length === 0) return [];
  return (await sql.rows(`SELECT * FROM jobs WHERE id = ANY($1::uuid[])`, [ids])).map(toJobRecord);
}

/** The columns a state change may write; anything else is immutable after creation. */
export interface JobChanges {
  state?: JobState;
  attempt?: number;
  nodeIds?: string[];
  pendingReason?: string | null;
  exitCode?: number | null;
  reason?: string | null;
  cancelRequested?: boolean;
  retriesForgiven?: number;
  startFailedOn?: string[];
  preemptedAttempt?: number | null;
  preemptedFor?: string | null;
  lastPreemptedAt?: Date | null;
  startedAt?: Date | null;
  finishedAt?: Date | null;
}

const COLUMNS: Record<keyof JobChanges, string> = {
  state: 'state',
  attempt: 'attempt',
  nodeIds: 'node_ids',
  pendingReason: 'pending_reason',
  exitCode: 'exit_code',
  reason: 'reason',
  cancelRequested: 'cancel_requested',
  retriesForgiven: 'retries_forgiven',
  startFailedOn: 'start_failed_on',
  preemptedAttempt: 'preempted_attempt',
  preemptedFor: 'preempted_for',
  lastPreemptedAt: 'last_preempted_at',
  startedAt: 'started_at',
  finishedAt: 'finished_at',
};

/**
 * Compare-and-set on the job's version: applies `changes` only if nobody wrote the job since it was read,
 * and reserves `eventCount` event seqs. Returns the first reserved seq. Throws ConcurrentUpdateError on a lost race.
 */
export async function casUpdateJob(
  sql: Sql,
  id: string,
  expectedVersion: number,
  changes: JobChanges,
  eventCount: number,
  now: Date,
): Promise<{ firstSeq: number; version: number }> {
  const params: unknown[] = [id, expectedVersion, eventCount, now];
  const sets = Object.entries(changes).map(([k, v]) => {
    params.push(v);
    return `${COLUMNS[k as keyof JobChanges]} = $${params.length}`;
  });
  const [row] = await sql.rows<{ last_event_seq: number; version: string }>(
    `UPDATE jobs SET ${[...sets, 'version = version + 1', 'last_event_seq = last_event_seq + $3', 'updated_at = $4'].join(', ')}
     WHERE id = $1 AND version = $2 RETURNING last_event_seq, version`,
    params,
  );
  if (!row) throw new ConcurrentUpdateError(`job ${id}`);
  return { firstSeq: row.last_event_seq - eventCount + 1, version: Number(row.version) };
}

export interface RankRecord {
  rank: number;
  nodeId: string;
  state: RankState;
  released: boolean;
}

export async function loadRanks(sql: Sql, jobId: string, attempt: number): Promise<RankRecord[]> {
  const rows = await sql.rows<{ rank: number; node_id: string; state: RankState; released_at: Date | null }>(
    `SELECT rank, node_id, state, released_at FROM attempt_nodes WHERE job_id = $1 AND attempt = $2 ORDER BY rank`,
    [jobId, attempt],
  );
  return rows.map((r) => ({ rank: r.rank, nodeId: r.node_id, state: r.state, released: r.released_at !== null }));
}

// Not prepared: its generic plan cost more Postgres CPU than planning saves (bench/api/db-path).
const FIND_JOBS_WITH_RANKS = `SELECT j.*, COALESCE((
       SELECT json_agg(json_build_object('rank', a.rank, 'nodeId', a.node_id, 'state', a.state, 'released', a.released_at IS NOT NULL) ORDER BY a.rank)
       FROM attempt_nodes a WHERE a.job_id = j.id AND a.attempt = j.attempt), '[]') AS current_ranks
     FROM jobs j WHERE j.id = ANY($1::uuid[])`;

/** Jobs with the ranks of their current attempts, in one round trip (the report path reads both for every report). */
export async function findJobsWithRanks(sql: Sql, ids: readonly string[]): Promise<Map<string, { job: JobRecord; ranks: RankRecord[] }>> {
  if (ids.length === 0) return new Map();
  const rows = await sql.rows(FIND_JOBS_WITH_RANKS, [ids]);
  return new Map(rows.map((row) => [row.id as string, { job: toJobRecord(row), ranks: row.current_ranks as RankRecord[] }]));
}

/**
 * Frees what one rank held on its node (its capacity and its GPU devices), exactly once: only the
 * update that flips released_at from NULL gives anything back, and writes the rank's usage record
 * with `outcome` (ADR 0037). Returns whether this call released it.
 * The node's version does not move: a placement planned before a release still holds (ADR 0003).
 * The caller gives the GPUs of the ranks it released back to their queue with releaseQueueGpus, as
 * the last write of its transaction (ADR 0039).
 */
export async function releaseRank(sql: Sql, jobId: string, attempt: number, nodeId: string, now: Date, outcome: string): Promise<boolean> {
  const rows = await sql.rows(
    `WITH r AS (
       UPDATE attempt_nodes SET released_at = $4
       WHERE job_id = $1 AND attempt = $2 AND node_id = $3 AND released_at IS NULL
       RETURNING job_id, attempt, rank, node_id, gpus, cpu_cores, memory_mib, gpu_indices, created_at
     ), usage_recorded AS (
       INSERT INTO usage_records (job_id, attempt, rank, owner, queue, gpu_model, node_id, gpus, cpu_cores, memory_mib, nodes, started_at, ended_at, outcome)
       SELECT f.job_id, f.attempt, f.rank, j.owner, j.queue, ${USAGE_GPU_MODEL}, f.node_id, f.gpus, f.cpu_cores, f.memory_mib, j.nodes, f.created_at, $4, $5
       FROM r f JOIN jobs j ON j.id = f.job_id LEFT JOIN nodes n ON n.id = f.node_id
     )
     UPDATE nodes n SET gpus_allocated = n.gpus_allocated - r.gpus, cpu_allocated = n.cpu_allocated - r.cpu_cores,
       memory_allocated = n.memory_allocated - r.memory_mib, updated_at = $4,
       gpus_held = ARRAY(SELECT d FROM unnest(n.gpus_held) AS d WHERE NOT d = ANY(r.gpu_indices))
     FROM r WHERE n.id = r.node_id RETURNING n.id`,
    [jobId, attempt, nodeId, now, outcome],
  );
  return rows.length > 0;
}

/**
 * Takes the GPUs of released ranks off their queues' counts in queue_gpus_held (ADR 0039), queue by
 * queue in name order. Last in the caller's transaction, after every job, rank and node it writes:
 * a placement that waits for these rows holds nodes and jobs, so taking a row before one of those
 * could deadlock with it.
 */
export async function releaseQueueGpus(sql: Sql, freed: ReadonlyArray<{ queue: string; gpus: number }>): Promise<void> {
  const byQueue = new Map<string, number>();
  for (const f of freed) byQueue.set(f.queue, (byQueue.get(f.queue) ?? 0) + f.gpus);
  for (const queue of [...byQueue.keys()].sort()) {
    const gpus = byQueue.get(queue)!;
    if (gpus > 0) await sql.rows(`UPDATE queue_gpus_held SET gpus = gpus - $2 WHERE queue = $1`, [queue, gpus]);
  }
}

export interface JobEventRecord {
  seq: number;
  type: string;
  at: Date;
  fromState: string | null;
  toState: string | null;
  attempt: number | null;
  nodeIds: string[] | null;
  reason: string | null;
}

export async function listJobEvents(sql: Sql, jobId: string, afterSeq: number, limit: number): Promise<JobEventRecord[]> {
  const rows = await sql.rows<Record<string, any>>(`SELECT * FROM job_events WHERE job_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [jobId, afterSeq, limit]);
  return rows.map((r) => ({
    seq: r.seq,
    type: r.type,
    at: r.at,
    fromState: r.from_state,
    toState: r.to_state,
    attempt: r.attempt,
    nodeIds: r.node_ids,
    reason: r.reason,
  }));
}

/** Informational, so no version bump and no event: rewritten only where it changed. */
export async function setPendingReasons(sql: Sql, reasons: Array<{ jobId: string; reason: string }>): Promise<void> {
  if (reasons.length === 0) return;
  await sql.rows(
    `UPDATE jobs j SET pending_reason = r.reason
     FROM unnest($1::uuid[], $2::text[]) AS r(id, reason)
     WHERE j.id = r.id AND j.state = 'QUEUED' AND j.pending_reason IS DISTINCT FROM r.reason`,
    [reasons.map((r) => r.jobId), reasons.map((r) => r.reason)],
  );
}

export interface LiveRankRow {
  job: JobRecord;
  nodeId: string;
  rankState: RankState;
  placedAt: Date;
}

const LIVE_RANKS_ON_NODES = prepared(`SELECT j.*, a.node_id AS rank_node_id, a.state AS rank_state, a.created_at AS rank_created_at
     FROM attempt_nodes a JOIN jobs j ON j.id = a.job_id AND j.attempt = a.attempt
     WHERE a.released_at IS NULL AND a.node_id = ANY($1::text[])`);

/** Every unreleased rank of a current attempt on the given nodes, with its job: the desired state. */
export async function loadLiveRanksOnNodes(sql: Sql, nodeIds: string[]): Promise<LiveRankRow[]> {
  if (nodeIds.length === 0) return [];
  const rows = await sql.rows<Record<string, any>>(LIVE_RANKS_ON_NODES, [nodeIds]);
  return rows.map((r) => ({ job: toJobRecord(r), nodeId: r.rank_node_id, rankState: r.rank_state, placedAt: r.rank_created_at }));
}

export interface JobListFilter {
  owner?: string;
  queue?: string;
  state?: JobState;
  /** Only the children of this array's parent (ADR 0025). */
  arrayOf?: string;
}

/**
 * One page of jobs in (created_at, id) order after the given position: keyset pagination over an
 * immutable key, so a job that exists and matches for the whole listing is returned exactly once.
 */
export async function listJobsPage(sql: Sql, filter: JobListFilter, after: { createdAt: Date; id: string } | null, limit: number): Promise<JobRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, value: unknown) => {
    params.push(value);
    where.push(clause.replace('?', `$${params.length}`));
  };
  if (filter.owner !== undefined) add('owner = ?', filter.owner);
  if (filter.queue !== undefined) add('queue = ?', filter.queue);
  if (filter.state !== undefined) add('state = ?', filter.state);
  if (filter.arrayOf !== undefined) add('array_of = ?', filter.arrayOf);
  if (after) {
    params.push(after.createdAt, after.id);
    where.push(`(created_at, id) > ($${params.length - 1}, $${params.length})`);
  }
  params.push(limit);
  const rows = await sql.rows(
    `SELECT * FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at, id LIMIT $${params.length}`,
    params,
  );
  return rows.map(toJobRecord);
}

/**
 * What a scheduling cycle reads of a queued job: what it plans with (queue, shape, array, maxRuntimeSeconds for backfill), what the
 * placement's compare-and-set and RUN need (state, attempt, version, trace), and the pending reason
 * it may change. Not the command, environment, labels or times: the relay builds the RUN from the
 * job's row when it sends it (run-dispatch.ts). Parsing whole rows cost the scheduler several times
 * the CPU of these (ADR 0008), and a cycle reads up to the lookahead of every queue.
 */
export type QueuedJobHead = ReturnType<typeof toQueuedJobHead>;

/**
 * The head's fields of a row that has their columns, mapped by toJobRecord (the one place columns
 * become fields). Spelled out, not picked by a key list: Object.fromEntries cost more (ADR 0008).
 */
function toQueuedJobHead(r: Record<string, any>) {
  const j: JobRecord = toJobRecord(r);
  return {
    id: j.id,
    queue: j.queue,
    owner: j.owner,
    state: j.state,
    attempt: j.attempt,
    version: j.version,
    traceParent: j.traceParent,
    nodes: j.nodes,
    gpus: j.gpus,
    gpuModel: j.gpuModel,
    cpuCores: j.cpuCores,
    memoryMiB: j.memoryMiB,
    pendingReason: j.pendingReason,
    arrayOf: j.arrayOf,
    arrayParallelism: j.arrayParallelism,
    startFailedOn: j.startFailedOn,
    maxRuntimeSeconds: j.maxRuntimeSeconds ?? null,
  };
}

// One index range per queue (jobs_queued_by_queue, whose predicate leaves out jobs waiting for
// dependencies, ADR 0023, and array parents, ADR 0025): the cost follows the lookahead, not the backlog.
// Jobs backing off (not_before in the future) are skipped in that range: a filter on rows the index
// walk reads anyway, so it costs a row per job backing off, and there are few (ADR 0022).
const QUEUED_JOBS_PER_QUEUE = prepared(`SELECT j.id, j.queue, j.owner, j.state, j.attempt, j.version, j.trace_parent, j.nodes, j.gpus, j.gpu_model,
       j.cpu_cores, j.memory_mib, j.pending_reason, j.array_of, j.array_parallelism, j.start_failed_on, j.max_runtime_seconds
     FROM queues q CROSS JOIN LATERAL (
       SELECT * FROM jobs WHERE state = 'QUEUED' AND deps_pending = 0 AND array_size IS NULL AND queue = q.name AND (not_before IS NULL OR not_before <= now())
       ORDER BY created_at, id LIMIT $1) j
     ORDER BY j.created_at, j.id`);

/** The oldest `perQueue` queued jobs of every queue: what the fairness policy may choose from. */
export async function loadQueuedJobsPerQueue(sql: Sql, perQueue: number): Promise<QueuedJobHead[]> {
  const rows = await sql.rows(QUEUED_JOBS_PER_QUEUE, [perQueue]);
  return rows.map(toQueuedJobHead);
}
