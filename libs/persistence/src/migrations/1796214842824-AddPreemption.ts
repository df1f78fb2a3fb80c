import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Preemption (contract §4.7, ADR 0026).
 *
 * - `queues.preemption`: 'never' (the default) or 'lowerPriority': whether the queue's jobs may end
 *   running attempts of strictly lower bands.
 * - `jobs.preempted_attempt`: the attempt told to stop for a preemptor and not yet stopped (its ranks
 *   keep their devices until its agent reports it ended or its node is declared dead); null otherwise.
 * - `jobs.preempted_for`: the job it stops for, so that a preemptor with victims still stopping
 *   is not given more.
 * - `jobs.last_preempted_at`: when it was last told to stop, for GANTRY_PREEMPTION_COOLDOWN_MS.
 */
export class AddPreemption1796214842824 implements MigrationInterface {
  name = 'AddPreemption1796214842824';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE queues ADD COLUMN preemption text NOT NULL DEFAULT 'never' CHECK (preemption IN ('never', 'lowerPriority'))`);
    await q.query(`ALTER TABLE jobs ADD COLUMN preempted_attempt int NULL, ADD COLUMN preempted_for uuid NULL, ADD COLUMN last_preempted_at timestamptz NULL`);
    await q.query(`CREATE INDEX jobs_preempting ON jobs (preempted_for) WHERE preempted_attempt IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX jobs_preempting`);
    await q.query(`ALTER TABLE jobs DROP COLUMN last_preempted_at, DROP COLUMN preempted_for, DROP COLUMN preempted_attempt`);
    await q.query(`ALTER TABLE queues DROP COLUMN preemption`);
  }
}
