import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Node enrollments (contract 4.1): which nodes may speak, and the generation of each one's
 * credential. The credential itself is never stored: it is derived from a secret the services hold
 * and (node id, generation), so enrolling again (rotation) bumps the generation and the old
 * credential stops verifying. `changed_xid` (set by the trigger nodes use) lets verifiers read
 * only what changed since their last read.
 */
export class AddNodeEnrollments1764490000000 implements MigrationInterface {
  name = 'AddNodeEnrollments1764490000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE node_enrollments (
        node_id text PRIMARY KEY,
        generation int NOT NULL CHECK (generation >= 1),
        enrolled_at timestamptz NOT NULL,
        revoked_at timestamptz NULL,
        changed_xid xid8 NOT NULL DEFAULT pg_current_xact_id()
      )`);
    await q.query(`CREATE TRIGGER node_enrollments_stamp_change BEFORE UPDATE ON node_enrollments FOR EACH ROW EXECUTE FUNCTION nodes_stamp_change()`);
    await q.query(`CREATE INDEX node_enrollments_changed ON node_enrollments (changed_xid)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE node_enrollments`);
  }
}
