import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Hierarchical queues with borrowing (contract 5.4, ADR 0039): `queues.parent` and
 * `queues.borrowing_limit_gpus`, and `queue_gpus_held`, the GPUs each queue's unreleased ranks hold,
 * kept by the placement commit (which locks and checks it) and by every release. Initialised from
 * the live ranks; a trigger gives every new queue its row, whoever inserts it.
 */
export class AddQueueHierarchy1796430000000 implements MigrationInterface {
  name = 'AddQueueHierarchy1796430000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE queues
      ADD COLUMN parent text NULL REFERENCES queues (name),
      ADD COLUMN borrowing_limit_gpus integer NOT NULL DEFAULT 0 CONSTRAINT queues_borrowing_limit_non_negative CHECK (borrowing_limit_gpus >= 0)`);
    await q.query(`CREATE INDEX queues_by_parent ON queues (parent) WHERE parent IS NOT NULL`);
    await q.query(`CREATE TABLE queue_gpus_held (
      queue text PRIMARY KEY REFERENCES queues (name) ON DELETE CASCADE,
      gpus bigint NOT NULL CONSTRAINT queue_gpus_held_non_negative CHECK (gpus >= 0))`);
    await q.query(`CREATE FUNCTION gantry_queue_gpus_row() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO queue_gpus_held (queue, gpus) VALUES (NEW.name, 0) ON CONFLICT DO NOTHING; RETURN NEW; END $$`);
    await q.query(`CREATE TRIGGER queues_gpus_row AFTER INSERT ON queues FOR EACH ROW EXECUTE FUNCTION gantry_queue_gpus_row()`);
    await q.query(`INSERT INTO queue_gpus_held (queue, gpus)
      SELECT q.name, COALESCE((SELECT sum(a.gpus) FROM jobs j JOIN attempt_nodes a ON a.job_id = j.id AND a.released_at IS NULL WHERE j.queue = q.name), 0)
      FROM queues q`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER queues_gpus_row ON queues`);
    await q.query(`DROP FUNCTION gantry_queue_gpus_row()`);
    await q.query(`DROP TABLE queue_gpus_held`);
    await q.query(`ALTER TABLE queues DROP COLUMN parent, DROP COLUMN borrowing_limit_gpus`);
  }
}
