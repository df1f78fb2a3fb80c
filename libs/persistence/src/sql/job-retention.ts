import { Sql } from './sql';

/**
 * Deletes up to `batch` jobs that finished before `cutoff`, with everything that belongs to them
 * (events, attempts, idempotency keys), in one statement; returns how many went. Rows another
 * sweeper has locked are skipped, so replicas sweeping at once share the work instead of waiting.
 * Uses the partial index on finished_at.
 *
 * A job's idempotency key has expired by then when the retention is at least the key's TTL (the
 * gateway's config requires it), so keys are found through the expiry index among those not yet
 * swept (sweepIdempotencyKeys first keeps that range small): there is no index on their job id.
 */
export async function deleteJobsFinishedBefore(sql: Sql, cutoff: Date, batch: number, now: Date): Promise<number> {
  const rows = await sql.rows(
    `WITH doomed AS MATERIALIZED (
       SELECT id FROM jobs WHERE finished_at < $1 AND state IN ('SUCCEEDED', 'FAILED', 'CANCELLED')
       ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED
     ), events AS (
       DELETE FROM job_events WHERE job_id IN (SELECT id FROM doomed)
     ), attempts AS (
       DELETE FROM attempt_nodes WHERE job_id IN (SELECT id FROM doomed)
     ), keys AS (
       DELETE FROM idempotency_keys WHERE expires_at <= $3 AND job_id IN (SELECT id FROM doomed)
     )
     DELETE FROM jobs WHERE id IN (SELECT id FROM doomed) RETURNING id`,
    [cutoff, batch, now],
  );
  return rows.length;
}
