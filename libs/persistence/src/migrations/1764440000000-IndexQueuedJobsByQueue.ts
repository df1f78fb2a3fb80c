import { MigrationInterface, QueryRunner } from 'typeorm';

/** The scheduler reads the head of each queue; this keeps that read independent of the backlog size. */
export class IndexQueuedJobsByQueue1764440000000 implements MigrationInterface {
  name = 'IndexQueuedJobsByQueue1764440000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX jobs_queued_by_queue ON jobs (queue, created_at, id) WHERE state = 'QUEUED'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX jobs_queued_by_queue`);
  }
}
