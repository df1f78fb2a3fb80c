import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Jobs are indexed by queue only while they are active (QUEUED, SCHEDULED or RUNNING): queue usage
 * and the scheduler's per-queue holdings read only those, and an index over every version of every
 * job ever (jobs_queue_state) grew with history and cost an entry per state change. jobs_queued
 * (by created_at) had no reader left; the scheduler reads jobs_queued_by_queue.
 */
export class IndexActiveJobsByQueue1764470000000 implements MigrationInterface {
  name = 'IndexActiveJobsByQueue1764470000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX jobs_active_by_queue ON jobs (queue, state) WHERE state IN ('QUEUED', 'SCHEDULED', 'RUNNING')`);
    await q.query(`DROP INDEX jobs_queue_state`);
    await q.query(`DROP INDEX jobs_queued`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX jobs_queued ON jobs (created_at, id) WHERE state = 'QUEUED'`);
    await q.query(`CREATE INDEX jobs_queue_state ON jobs (queue, state)`);
    await q.query(`DROP INDEX jobs_active_by_queue`);
  }
}
