import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retry policy and backoff (ADR 0022).
 *
 * - `jobs.backoff_seconds`, `jobs.max_backoff_seconds`, `jobs.retry_on_exit_codes`: the job's retry
 *   policy beside the existing `max_retries`. Existing jobs get the defaults (10 s, 600 s, no exit
 *   code retried), which is what they did before: only lost attempts were retried.
 * - `jobs.not_before`: a job QUEUED again after a retried exit is not placed before this time; the
 *   scheduler's queue-head read skips it until then (null: no wait).
 *
 * Constant defaults and no CHECKs: adding the columns rewrites and scans nothing; the gateway
 * validates what it writes.
 */
export class AddRetryPolicy1796211464196 implements MigrationInterface {
  name = 'AddRetryPolicy1796211464196';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs ADD COLUMN backoff_seconds int NOT NULL DEFAULT 10,
      ADD COLUMN max_backoff_seconds int NOT NULL DEFAULT 600,
      ADD COLUMN retry_on_exit_codes int[] NOT NULL DEFAULT '{}',
      ADD COLUMN not_before timestamptz NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs DROP COLUMN backoff_seconds, DROP COLUMN max_backoff_seconds, DROP COLUMN retry_on_exit_codes, DROP COLUMN not_before`);
  }
}
