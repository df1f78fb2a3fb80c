import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Job arrays (ADR 0025).
 *
 * - `jobs.array_size`, `jobs.array_parallelism` on a parent; `jobs.array_of`, `jobs.array_index`
 *   and a copy of `array_parallelism` on each child (so the scheduler reads a child's cap with the
 *   child, without a join). A child goes with its parent (ON DELETE CASCADE); the parent ends only
 *   after every child, so retention takes the children first or with it.
 * - `jobs_queued_by_queue` is rebuilt to leave parents out (`array_size IS NULL`): a parent is never
 *   placed, and the scheduler's queue-head read never sees it.
 * - `jobs_array_children (array_of, created_at, id)`: `GET /v1/jobs?arrayOf=` in list order, and the
 *   children-by-state count of one parent.
 * - `jobs_active_by_array (array_of) WHERE SCHEDULED | RUNNING`: the scheduler's per-array running
 *   count, read with the candidate batch; at most `parallelism` entries per array.
 * - `jobs_open_arrays`: parents not ended yet, which the summariser reads each tick.
 */
export class AddJobArrays1796214808627 implements MigrationInterface {
  name = 'AddJobArrays1796214808627';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs ADD COLUMN array_size int NULL CHECK (array_size BETWEEN 1 AND 10000),
      ADD COLUMN array_parallelism int NULL CHECK (array_parallelism >= 1),
      ADD COLUMN array_of uuid NULL REFERENCES jobs (id) ON DELETE CASCADE,
      ADD COLUMN array_index int NULL CHECK (array_index >= 0),
      ADD CONSTRAINT jobs_array_child CHECK ((array_of IS NULL) = (array_index IS NULL)),
      ADD CONSTRAINT jobs_array_not_nested CHECK (array_of IS NULL OR array_size IS NULL)`);
    await q.query(`CREATE INDEX jobs_array_children ON jobs (array_of, created_at, id) WHERE array_of IS NOT NULL`);
    await q.query(`CREATE INDEX jobs_active_by_array ON jobs (array_of) WHERE array_of IS NOT NULL AND state IN ('SCHEDULED', 'RUNNING')`);
    await q.query(`CREATE INDEX jobs_open_arrays ON jobs (created_at, id) WHERE array_size IS NOT NULL AND state IN ('QUEUED', 'RUNNING')`);
    await q.query(`DROP INDEX jobs_queued_by_queue`);
    await q.query(`CREATE INDEX jobs_queued_by_queue ON jobs (queue, created_at, id) WHERE state = 'QUEUED' AND deps_pending = 0 AND array_size IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX jobs_queued_by_queue`);
    await q.query(`CREATE INDEX jobs_queued_by_queue ON jobs (queue, created_at, id) WHERE state = 'QUEUED' AND deps_pending = 0`);
    await q.query(`DROP INDEX jobs_open_arrays`);
    await q.query(`DROP INDEX jobs_active_by_array`);
    await q.query(`DROP INDEX jobs_array_children`);
    await q.query(`ALTER TABLE jobs DROP CONSTRAINT jobs_array_not_nested, DROP CONSTRAINT jobs_array_child,
      DROP COLUMN array_index, DROP COLUMN array_of, DROP COLUMN array_parallelism, DROP COLUMN array_size`);
  }
}
