import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each attempt rank names its job's queue and owner (which never change), so the scheduler's
 * fair-share read sums the live ranks from one partial index instead of joining every live rank to
 * `jobs` (a hash join over the whole jobs table, once a second: ADR 0038).
 */
export class AddRankQueueAndOwner1796440000000 implements MigrationInterface {
  name = 'AddRankQueueAndOwner1796440000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE attempt_nodes ADD COLUMN queue text NULL, ADD COLUMN owner text NULL`);
    await q.query(`UPDATE attempt_nodes a SET queue = j.queue, owner = j.owner FROM jobs j WHERE j.id = a.job_id`);
    await q.query(`ALTER TABLE attempt_nodes ALTER COLUMN queue SET NOT NULL, ALTER COLUMN owner SET NOT NULL`);
    await q.query(`CREATE INDEX attempt_nodes_live_by_owner ON attempt_nodes (queue, owner) INCLUDE (gpus, created_at) WHERE released_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX attempt_nodes_live_by_owner`);
    await q.query(`ALTER TABLE attempt_nodes DROP COLUMN queue, DROP COLUMN owner`);
  }
}
