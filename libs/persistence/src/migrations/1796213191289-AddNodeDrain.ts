import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drain (contract §4.7, docs/nodes.md).
 *
 * - `nodes.drain_deadline`: a node being drained (cordoned at the request) whose attempts still
 *   there are ended and requeued at this time by the reconciler's leader; cleared then, or by an
 *   uncordon (which cancels the drain).
 * - `jobs.retries_forgiven`: attempts the control plane ended by its own choice (a drain): they
 *   use none of the job's retries.
 */
export class AddNodeDrain1796213191289 implements MigrationInterface {
  name = 'AddNodeDrain1796213191289';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE nodes ADD COLUMN drain_deadline timestamptz NULL`);
    await q.query(`CREATE INDEX nodes_draining ON nodes (drain_deadline) WHERE drain_deadline IS NOT NULL`);
    await q.query(`ALTER TABLE jobs ADD COLUMN retries_forgiven int NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs DROP COLUMN retries_forgiven`);
    await q.query(`DROP INDEX nodes_draining`);
    await q.query(`ALTER TABLE nodes DROP COLUMN drain_deadline`);
  }
}
