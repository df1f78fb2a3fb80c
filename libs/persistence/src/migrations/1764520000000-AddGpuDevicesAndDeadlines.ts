import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GPU devices, gang addresses and deadlines (ADR 0019).
 *
 * - `nodes.gpu_indices`: the device indices of the node's healthy GPUs of its model (from telemetry,
 *   so `gpus_total` is their count); `nodes.gpus_held`: the indices held by unreleased ranks, kept by
 *   the placement statement and the two release paths in the same statements as `gpus_allocated`.
 *   `nodes_gpus_held_distinct` makes the database refuse a device held twice, whatever a writer does.
 * - `attempt_nodes.gpu_indices`: what each rank holds (released with it); `jobs.gpu_indices`: the
 *   current attempt's, rank by rank (`gpus` each), beside `node_ids`, for the RUN and the job view.
 * - `nodes.address`: where the node listens (heartbeats' `address`); `jobs.master_addr`: rank 0's
 *   address when the attempt was placed.
 * - `jobs.max_runtime_seconds`: the attempt's deadline, carried in its RUN.
 *
 * Existing nodes get devices 0 .. gpus_total - 1 until their next telemetry says which; attempts
 * already running hold no recorded devices (they still hold their count).
 */
export class AddGpuDevicesAndDeadlines1764520000000 implements MigrationInterface {
  name = 'AddGpuDevicesAndDeadlines1764520000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION gantry_int_array_distinct(a int[]) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT count(*) = count(DISTINCT x) FROM unnest(a) AS x $$`);
    await q.query(`ALTER TABLE nodes ADD COLUMN gpu_indices int[] NOT NULL DEFAULT '{}',
      ADD COLUMN gpus_held int[] NOT NULL DEFAULT '{}', ADD COLUMN address text NULL`);
    await q.query(`UPDATE nodes SET gpu_indices = ARRAY(SELECT generate_series(0, gpus_total - 1)) WHERE gpus_total > 0`);
    await q.query(`ALTER TABLE nodes ADD CONSTRAINT nodes_gpus_held_distinct CHECK (gantry_int_array_distinct(gpus_held))`);
    await q.query(`ALTER TABLE attempt_nodes ADD COLUMN gpu_indices int[] NOT NULL DEFAULT '{}'`);
    await q.query(`ALTER TABLE jobs ADD COLUMN gpu_indices int[] NOT NULL DEFAULT '{}', ADD COLUMN master_addr text NULL,
      ADD COLUMN max_runtime_seconds int NULL CHECK (max_runtime_seconds > 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs DROP COLUMN gpu_indices, DROP COLUMN master_addr, DROP COLUMN max_runtime_seconds`);
    await q.query(`ALTER TABLE attempt_nodes DROP COLUMN gpu_indices`);
    await q.query(`ALTER TABLE nodes DROP CONSTRAINT nodes_gpus_held_distinct`);
    await q.query(`ALTER TABLE nodes DROP COLUMN gpu_indices, DROP COLUMN gpus_held, DROP COLUMN address`);
    await q.query(`DROP FUNCTION gantry_int_array_distinct(int[])`);
  }
}
