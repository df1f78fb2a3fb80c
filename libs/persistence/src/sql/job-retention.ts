import { Sql } from './sql';

/**
 * Deletes up to `batch` jobs that finished before `cutoff`, with everything that belongs to them
 * (events, attempts, idempotency keys), in one statement; returns how many went. Rows another
 * sweeper has locked are skipped, so replicas sweeping at once share the work instead of waiting.
 * Uses the partial index on finished_at; a job's key is found through the key's primary key (the
 * job carries it), or, for jobs created before jobs carried it, among the expired keys.
 */
export async function deleteJobsFinishedBefore(sql: Sql, cutoff: Date, batch: number, now: Date): Promise<number> {
  const rows = await sql.rows(
    `WITH doomed AS MATERIALIZED (
       SELECT id, owner, idempotency_key FROM jobs WHERE finished_at < $1 AND state IN ('SUCCEEDED', 'FAILED', 'CANCELLED')
         -- An array's parent goes after its last child (ADR 0025): its FK would take the children without their events.
         AND (array_size IS NULL OR NOT EXISTS (SELECT 1 FROM jobs c WHERE c.array_of = jobs.id))
       ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED
     ), events AS (
       DELETE FROM job_events WHERE job_id IN (SELECT id FROM doomed)
     ), attempts AS (
       DELETE FROM attempt_nodes WHERE job_id IN (SELECT id FROM doomed)
     ), keys AS (
       DELETE FROM idempotency_keys k USING doomed d WHERE k.owner = d.owner AND k.key = d.idempotency_key AND k.job_id = d.id
     ), older_keys AS (
       DELETE FROM idempotency_keys WHERE expires_at <= $3 AND job_id IN (SELECT id FROM doomed WHERE idempotency_key IS NULL)
     )
     DELETE FROM jobs WHERE id IN (SELECT id FROM doomed) RETURNING id`,
    [cutoff, batch, now],
  );
  return rows.length;
}
