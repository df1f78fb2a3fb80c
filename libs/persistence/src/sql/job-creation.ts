import { RETRY_POLICY_DEFAULTS } from '@gantry/domain';
import { JobRecord, NewJob, findJobs, toJobRecord } from './job-rows';
import { findIdempotencyKeys, keyOf } from './idempotency-keys';
import { ConcurrentUpdateError, Sql, intArrayLiteral, prepared } from './sql';

export interface JobCreation {
  job: NewJob;
  idempotency: { key: string; bodySha256: string } | null;
  /** Whether the caller may submit to a queue whatever its allowed owners say (operators). */
  anyQueue?: boolean;
}

export type JobCreationOutcome =
  | { kind: 'created'; job: JobRecord }
  /** An earlier request with the same key and body created `job`. */
  | { kind: 'replayed'; job: JobRecord }
  /** The key was used before with another body. */
  | { kind: 'key-mismatch' }
  | { kind: 'unknown-queue' }
  /** The queue's allowed owners do not include the job's owner. */
  | { kind: 'queue-forbidden' };

/**
 * Creates a batch of jobs. The common case is one statement, so one round trip and one commit
 * however many jobs the batch holds: the idempotency keys are claimed, and every job whose queue
 * exists and allows its owner, and whose key this statement claimed (or that has none), is written
 * with its CREATED event. The caller wakes the scheduler after it returns (WakeUpSender). Only requests that were not
 * created (a replay, a key used with another body, an unknown or forbidden queue) cost a second read. Requests must not share an
 * (owner, key) pair. Outcomes come back in request order.
 *
 * It does not retry. A request that was neither created nor found (its key's holder expired and was
 * swept between the two statements) throws ConcurrentUpdateError; trying it again claims the key
 * afresh. Retrying is the client's, with the same Idempotency-Key (docs/api.md).
 *
 * Outside a transaction on purpose: a key claimed by a concurrent batch makes this statement wait
 * on the primary key until that batch commits, and the follow-up read must then see its row, which
 * a transaction's earlier snapshot would not (READ COMMITTED takes one per statement).
 */
export async function createJobs(sql: Sql, requests: JobCreation[], now: Date, keyTtlMs: number): Promise<JobCreationOutcome[]> {
  const created = new Map((await insertCreatedJobs(sql, requests, now, keyTtlMs)).map((j) => [j.id, j]));
  const rest = requests.filter((r) => !created.has(r.job.id));
  if (rest.length === 0) return requests.map((r) => ({ kind: 'created', job: created.get(r.job.id)! }));
  const queues = await existingQueues(
    sql,
    rest.map((r) => r.job.queue),
  );
  const stored = await findIdempotencyKeys(
    sql,
    rest.filter((r) => r.idempotency).map((r) => ({ owner: r.job.owner, key: r.idempotency!.key })),
  );
  const earlierJobs = new Map((await findJobs(sql, [...new Set([...stored.values()].map((s) => s.jobId))])).map((j) => [j.id, j]));
  return requests.map((r): JobCreationOutcome => {
    const job = created.get(r.job.id);
    const earlier = r.idempotency ? stored.get(keyOf(r.job.owner, r.idempotency.key)) : undefined;
    if (job) return { kind: 'created', job };
    if (earlier)
      return earlier.bodySha256 === r.idempotency!.bodySha256 ? { kind: 'replayed', job: earlierJobs.get(earlier.jobId)! } : { kind: 'key-mismatch' };
    if (!queues.has(r.job.queue)) return { kind: 'unknown-queue' };
    if (!r.anyQueue && !admits(queues.get(r.job.queue)!, r.job.owner)) return { kind: 'queue-forbidden' };
    throw new ConcurrentUpdateError(`idempotency key of job ${r.job.id} (it expired and was swept meanwhile)`);
  });
}

/** Each existing queue's allowed owners (null: everyone). */
async function existingQueues(sql: Sql, names: string[]): Promise<Map<string, string[] | null>> {
  const rows = await sql.rows<{ name: string; allowed_owners: string[] | null }>(`SELECT name, allowed_owners FROM queues WHERE name = ANY($1::text[])`, [
    [...new Set(names)],
  ]);
  return new Map(rows.map((r) => [r.name, r.allowed_owners]));
}

const admits = (allowedOwners: string[] | null, owner: string): boolean => allowedOwners === null || allowedOwners.includes(owner);

const INSERT_CREATED_JOBS = prepared(`WITH queue AS MATERIALIZED (
       SELECT name, allowed_owners FROM queues WHERE name = ANY($3::text[]) FOR KEY SHARE
     ), input AS (
       SELECT t.* FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
         $9::int[], $10::text[], $11::int[], $12::bigint[], $13::int[], $14::int[], $15::text[], $16::timestamptz[],
         $17::text[], $18::text[], $21::boolean[], $22::int[], $23::int[], $24::int[], $25::text[], $26::int[], $27::int[], $28::int[])
       AS t (id, owner, queue, name, image, command, env, labels, gpus, gpu_model, cpu_cores, memory_mib, nodes, max_retries,
         trace_parent, created_at, idem_key, body_sha256, any_queue, max_runtime_seconds, backoff_seconds, max_backoff_seconds, retry_on_exit_codes, deps_pending, array_size, array_parallelism)
       JOIN queue q ON q.name = t.queue
       WHERE t.any_queue OR q.allowed_owners IS NULL OR t.owner = ANY(q.allowed_owners)
     ), claimed AS (
       INSERT INTO idempotency_keys (owner, key, body_sha256, job_id, created_at, expires_at)
       SELECT owner, idem_key, body_sha256, id, $19::timestamptz, $20::timestamptz FROM input WHERE idem_key IS NOT NULL
       ORDER BY owner, idem_key
       ON CONFLICT (owner, key) DO UPDATE SET body_sha256 = EXCLUDED.body_sha256, job_id = EXCLUDED.job_id,
         created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
       WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
       RETURNING job_id
     ), job AS (
       INSERT INTO jobs (id, owner, queue, name, image, command, env, labels, gpus, gpu_model, cpu_cores, memory_mib,
         nodes, max_retries, state, trace_parent, created_at, updated_at, last_event_seq, idempotency_key, max_runtime_seconds,
         backoff_seconds, max_backoff_seconds, retry_on_exit_codes, deps_pending, pending_reason, array_size, array_parallelism)
       SELECT id, owner, queue, name, image, command::jsonb, env::jsonb, labels::jsonb, gpus, gpu_model, cpu_cores, memory_mib,
         nodes, max_retries, 'QUEUED', trace_parent, created_at, created_at, 1, idem_key, max_runtime_seconds,
         backoff_seconds, max_backoff_seconds, retry_on_exit_codes::int[], deps_pending, CASE WHEN deps_pending > 0 THEN 'DEPENDENCY' END, array_size, array_parallelism
       FROM input WHERE idem_key IS NULL OR id IN (SELECT job_id FROM claimed)
       RETURNING *
     ), created AS (
       INSERT INTO job_events (job_id, seq, type, at, to_state) SELECT id, 1, 'CREATED', created_at, 'QUEUED' FROM job
     )
     SELECT * FROM job`);

/**
 * The statement: requests whose queue exists and admits them claim their (owner, key) through the
 * primary key, in
 * (owner, key) order so that two batches never wait on each other in a cycle; an expired key is
 * taken over as if new. The queue rows are key-share locked until the commit, so a queue cannot be
 * deleted under a create (deleteEmptyQueue waits for it). A racing claim of the same key waits for the first to commit and then finds
 * its row, so one job per key however many requests race. Returns the jobs written.
 */
async function insertCreatedJobs(sql: Sql, requests: JobCreation[], now: Date, keyTtlMs: number): Promise<JobRecord[]> {
  const col = <T>(f: (x: JobCreation) => T): T[] => requests.map(f);
  const rows = await sql.rows(INSERT_CREATED_JOBS, [
    col((x) => x.job.id),
    col((x) => x.job.owner),
    col((x) => x.job.queue),
    col((x) => x.job.name),
    col((x) => x.job.image),
    col((x) => JSON.stringify(x.job.command)),
    col((x) => JSON.stringify(x.job.env)),
    col((x) => JSON.stringify(x.job.labels)),
    col((x) => x.job.gpus),
    col((x) => x.job.gpuModel),
    col((x) => x.job.cpuCores),
    col((x) => x.job.memoryMiB),
    col((x) => x.job.nodes),
    col((x) => x.job.maxRetries),
    col((x) => x.job.traceParent),
    col((x) => x.job.createdAt),
    col((x) => x.idempotency?.key ?? null),
    col((x) => x.idempotency?.bodySha256 ?? null),
    now,
    new Date(now.getTime() + keyTtlMs),
    col((x) => x.anyQueue ?? false),
    col((x) => x.job.maxRuntimeSeconds ?? null),
    col((x) => x.job.backoffSeconds ?? RETRY_POLICY_DEFAULTS.backoffSeconds),
    col((x) => x.job.maxBackoffSeconds ?? RETRY_POLICY_DEFAULTS.maxBackoffSeconds),
    // One text[] of int[] literals: unnest flattens a 2-D array, so each job's codes travel as one element.
    col((x) => intArrayLiteral(x.job.retryOnExitCodes ?? [])),
    col((x) => x.job.depsPending ?? 0),
    col((x) => x.job.arraySize ?? null),
    col((x) => x.job.arrayParallelism ?? null),
  ]);
  return rows.map(toJobRecord);
}
