import { MigrationInterface, QueryRunner } from 'typeorm';

/** A DRF weight per queue: a queue of weight 2 is entitled to twice the dominant share (ADR 0008). */
export class AddQueueWeight1764450000000 implements MigrationInterface {
  name = 'AddQueueWeight1764450000000';

  async up(q: QueryRunner): Promise<void> {
    // Existing queues keep the behaviour they had: every weight was 1.
    await q.query(`ALTER TABLE queues ADD COLUMN weight double precision NOT NULL DEFAULT 1 CONSTRAINT queues_weight_positive CHECK (weight > 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE queues DROP COLUMN weight`);
  }
}
