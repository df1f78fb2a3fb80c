import { ArrayChildCounts, JobState, NO_CHILDREN } from '@gantry/domain';
import { JobRecord, toJobRecord } from './job-rows';
import { Sql } from './sql';
import { newJobId } from './job-ids';

/**
 * An array's children (ADR 0025), written from the parent row in one statement, with their CREATED
 * events: the ids travel as one uuid[] (unnest WITH ORDINALITY), everything else is copied from the
 * parent in the database, so 10,000 children cost one round trip and two parameters. Child i gets
 * `childIds[i]` and `array_index` i and the parent's `created_at`; the caller passes the ids in
 * ascending order (sortedChildIds), so that list and queue order, (created_at, id), are index
 * order while cursors stay in the milliseconds they are encoded in. Call in the transaction that
 * created the parent: a crash leaves neither.
 */
const INSERT_ARRAY_CHILDREN = `WITH parent AS (
       SELECT * FROM jobs WHERE id = $1 AND array_size = cardinality($2::uuid[])
     ), child AS (
       INSERT INTO jobs (id, owner, queue, name, image, command, env, labels, gpus, gpu_model, cpu_cores, memory_mib,
         nodes, max_retries, state, trace_parent, created_at, updated_at, last_event_seq, max_runtime_seconds,
         backoff_seconds, max_backoff_seconds, retry_on_exit_codes, array_of, array_index, array_parallelism)
       SELECT c.id, p.owner, p.queue, p.name, p.image, p.command, p.env, p.labels, p.gpus, p.gpu_model, p.cpu_cores, p.memory_mib,
         p.nodes, p.max_retries, 'QUEUED', p.trace_parent, p.created_at, p.created_at, 1, p.max_runtime_seconds,
         p.backoff_seconds, p.max_backoff_seconds, p.retry_on_exit_codes, p.id, c.n - 1, p.array_parallelism
       FROM parent p CROSS JOIN unnest($2::uuid[]) WITH ORDINALITY AS c (id, n)
       RETURNING id, created_at
     ), events AS (
       INSERT INTO job_events (job_id, seq, type, at, to_state) SELECT id, 1, 'CREATED', created_at, 'QUEUED' FROM child
     )
     SELECT count(*)::int AS n FROM child`;

/** `size` fresh job ids in ascending order: child i's id sorts before child i + 1's. */
export function sortedChildIds(size: number): string[] {
  return Array.from({ length: size }, newJobId).sort();
}

/** Writes the children; returns how many (0 when `childIds` does not match the parent's size). */
export async function insertArrayChildren(sql: Sql, parentId: string, childIds: readonly string[]): Promise<number> {
  const [row] = await sql.rows<{ n: number }>(INSERT_ARRAY_CHILDREN, [parentId, [...childIds]]);
  return row.n;
}

/** How many children each parent has in each state (one grouped read of jobs_array_children). */
export async function countArrayChildren(sql: Sql, parentIds: readonly string[]): Promise<Map<string, ArrayChildCounts>> {
  const out = new Map<string, ArrayChildCounts>(parentIds.map((id) => [id, NO_CHILDREN]));
  if (parentIds.length === 0) return out;
  const rows = await sql.rows<{ array_of: string; state: JobState; n: number }>(
    `SELECT array_of, state, count(*)::int AS n FROM jobs WHERE array_of = ANY($1::uuid[]) GROUP BY array_of, state`,
    [[...parentIds]],
  );
  for (const r of rows) out.set(r.array_of, { ...out.get(r.array_of)!, [r.state]: r.n });
  return out;
}

/**
 * How many children of each array are SCHEDULED or RUNNING now (jobs_active_by_array: at most
 * `parallelism` entries per array), for the scheduler's parallelism cap.
 */
export async function countActiveArrayChildren(sql: Sql, arrayIds: readonly string[]): Promise<Map<string, number>> {
  if (arrayIds.length === 0) return new Map();
  const rows = await sql.rows<{ array_of: string; n: number }>(
    `SELECT array_of, count(*)::int AS n FROM jobs WHERE array_of = ANY($1::uuid[]) AND state IN ('SCHEDULED', 'RUNNING') GROUP BY array_of`,
    [[...arrayIds]],
  );
  return new Map(rows.map((r) => [r.array_of, r.n]));
}

/** Parents not ended yet, oldest first, after `after` (jobs_open_arrays). */
export async function listOpenArrayParents(sql: Sql, after: { createdAt: Date; id: string } | null, limit: number): Promise<JobRecord[]> {
  const rows = await sql.rows(
    `SELECT * FROM jobs WHERE array_size IS NOT NULL AND state IN ('QUEUED', 'RUNNING') AND ($1::timestamptz IS NULL OR (created_at, id) > ($1, $2::uuid))
     ORDER BY created_at, id LIMIT $3`,
    [after?.createdAt ?? null, after?.id ?? null, limit],
  );
  return rows.map(toJobRecord);
}

/** A live rank of a child whose cancel was requested: it gets a KILL. */
export interface ChildKill {
  jobId: string;
  attempt: number;
  nodeId: string;
}

/**
 * Cancels every child of an array that has not ended and was not cancelled yet, in one statement
 * (each row judged as it is when locked, so a child placed or requeued meanwhile is not missed): a
 * QUEUED child ends CANCELLED (CANCEL_REQUESTED and STATE_CHANGED events), a SCHEDULED or RUNNING
 * one is marked `cancel_requested` (CANCEL_REQUESTED) and its live ranks are returned for KILLs,
 * as a job's own cancel does. Returns how many children it ended and the KILLs to send.
 */
export async function cancelArrayChildren(sql: Sql, parentId: string, now: Date): Promise<{ ended: number; kills: ChildKill[] }> {
  const rows = await sql.rows<{ id: string; attempt: number; ended: boolean; node_ids: string[] | null }>(
    `WITH c AS (
       UPDATE jobs SET cancel_requested = true, version = version + 1, updated_at = $2,
         last_event_seq = last_event_seq + CASE WHEN state = 'QUEUED' THEN 2 ELSE 1 END,
         state = CASE WHEN state = 'QUEUED' THEN 'CANCELLED' ELSE state END,
         finished_at = CASE WHEN state = 'QUEUED' THEN $2 ELSE finished_at END,
         pending_reason = CASE WHEN state = 'QUEUED' THEN NULL ELSE pending_reason END,
         reason = CASE WHEN state = 'QUEUED' THEN 'CANCELLED_BY_USER' ELSE reason END
       WHERE array_of = $1 AND state IN ('QUEUED', 'SCHEDULED', 'RUNNING') AND NOT cancel_requested
       RETURNING id, attempt, last_event_seq, state = 'CANCELLED' AS ended
     ), requested AS (
       INSERT INTO job_events (job_id, seq, type, at, attempt)
       SELECT id, last_event_seq - CASE WHEN ended THEN 1 ELSE 0 END, 'CANCEL_REQUESTED', $2, NULLIF(attempt, 0) FROM c
     ), changed AS (
       INSERT INTO job_events (job_id, seq, type, at, from_state, to_state, attempt, reason)
       SELECT id, last_event_seq, 'STATE_CHANGED', $2, 'QUEUED', 'CANCELLED', attempt, 'CANCELLED_BY_USER' FROM c WHERE ended
     )
     SELECT c.id, c.attempt, c.ended,
       (SELECT array_agg(a.node_id ORDER BY a.rank) FROM attempt_nodes a WHERE a.job_id = c.id AND a.attempt = c.attempt AND a.released_at IS NULL) AS node_ids
     FROM c`,
    [parentId, now],
  );
  return {
    ended: rows.filter((r) => r.ended).length,
    kills: rows.filter((r) => !r.ended).flatMap((r) => (r.node_ids ?? []).map((nodeId) => ({ jobId: r.id, attempt: r.attempt, nodeId }))),
  };
}
