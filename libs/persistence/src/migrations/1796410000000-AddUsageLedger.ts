import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The usage ledger (contract 5.4, ADR 0037).
 * - `usage_records`: one row per rank that held resources, written by the statement that releases
 *   it (attempt_nodes.released_at flips from NULL once), so each is written exactly once. No FK to
 *   jobs: records outlive them (GANTRY_USAGE_RETENTION_DAYS). `folded`: already summed into
 *   `usage_hourly` and `fair_share_usage` (a flag, not a sequence watermark: sequence values commit
 *   out of order, and a watermark would skip a late one).
 * - `usage_hourly`: per UTC hour, owner, queue and GPU model ('' for none), the folded records'
 *   GPU- and CPU-milliseconds in that hour, and the attempts (rank 0) and jobs (attempt 1) that
 *   started in it.
 */
export class AddUsageLedger1796410000000 implements MigrationInterface {
  name = 'AddUsageLedger1796410000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE usage_records (
      job_id uuid NOT NULL, attempt int NOT NULL, rank int NOT NULL,
      owner text NOT NULL, queue text NOT NULL, gpu_model text NOT NULL,
      node_id text NOT NULL, gpus int NOT NULL, cpu_cores int NOT NULL, memory_mib bigint NOT NULL, nodes int NOT NULL,
      started_at timestamptz NOT NULL, ended_at timestamptz NOT NULL, outcome text NOT NULL,
      folded boolean NOT NULL DEFAULT false,
      PRIMARY KEY (job_id, attempt, rank))`);
    await q.query(`CREATE INDEX usage_records_unfolded ON usage_records (ended_at) WHERE NOT folded`);
    await q.query(`CREATE INDEX usage_records_by_end ON usage_records (ended_at)`);
    await q.query(`CREATE TABLE usage_hourly (
      hour timestamptz NOT NULL, owner text NOT NULL, queue text NOT NULL, gpu_model text NOT NULL,
      gpu_ms bigint NOT NULL, cpu_ms bigint NOT NULL, attempts bigint NOT NULL, jobs bigint NOT NULL,
      PRIMARY KEY (hour, owner, queue, gpu_model))`);
    await q.query(`CREATE INDEX usage_hourly_by_owner ON usage_hourly (owner, hour)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE usage_hourly, usage_records`);
  }
}
