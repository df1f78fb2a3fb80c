import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A node is trusted for what an operator declared (contract §5.2, ADR 0035).
 *
 * - `node_enrollments.inventory`: the pinned inventory (`{gpus: {model, count} | null, cpuCores,
 *   memoryMiB, address}`), declared at enrollment or with PATCH /v1/nodes/{id}, else pinned from
 *   the node's first report; null until one of them.
 * - `nodes.reported`: what the node last reported (`{gpuModel, gpuIndices, cpuCores, memoryMiB,
 *   address}`). The columns placement reads (`gpu_model`, `gpus_total`, `gpu_indices`, `cpu_cores`,
 *   `memory_mib`, `address`) now hold what is believed: the lesser of pinned and reported.
 * - `nodes.start_failures`: ranks in a row that timed out starting there; `nodes.cordon_reason`:
 *   why a cordoned node is (`OPERATOR`, `DRAIN`, `START_FAILURES`).
 * - `jobs.start_failed_on`: nodes where an attempt of the job timed out starting (placement avoids them).
 *
 * Existing nodes pin what they were believed to have, so nothing they hold changes.
 */
export class AddDeclaredInventoryAndStartFailures1796215600000 implements MigrationInterface {
  name = 'AddDeclaredInventoryAndStartFailures1796215600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE node_enrollments ADD COLUMN inventory jsonb NULL`);
    await q.query(`ALTER TABLE nodes ADD COLUMN reported jsonb NULL,
      ADD COLUMN start_failures int NOT NULL DEFAULT 0 CHECK (start_failures >= 0),
      ADD COLUMN cordon_reason text NULL CHECK (cordon_reason IN ('OPERATOR', 'DRAIN', 'START_FAILURES'))`);
    await q.query(`ALTER TABLE jobs ADD COLUMN start_failed_on text[] NOT NULL DEFAULT '{}'`);
    await q.query(`UPDATE nodes SET reported = jsonb_build_object('gpuModel', gpu_model, 'gpuIndices', to_jsonb(gpu_indices),
      'cpuCores', cpu_cores, 'memoryMiB', memory_mib, 'address', address)`);
    await q.query(`UPDATE nodes SET cordon_reason = CASE WHEN drain_deadline IS NOT NULL THEN 'DRAIN' ELSE 'OPERATOR' END WHERE cordoned`);
    await q.query(`UPDATE node_enrollments e SET inventory = jsonb_build_object(
        'gpus', CASE WHEN n.gpus_total > 0 THEN jsonb_build_object('model', n.gpu_model, 'count', n.gpus_total) END,
        'cpuCores', n.cpu_cores, 'memoryMiB', n.memory_mib, 'address', n.address)
      FROM nodes n WHERE n.id = e.node_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs DROP COLUMN start_failed_on`);
    await q.query(`ALTER TABLE nodes DROP COLUMN reported, DROP COLUMN start_failures, DROP COLUMN cordon_reason`);
    await q.query(`ALTER TABLE node_enrollments DROP COLUMN inventory`);
  }
}
