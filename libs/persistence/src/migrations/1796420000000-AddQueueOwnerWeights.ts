import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `queues.owner_weights` (contract 5.4, ADR 0038): owners' weights inside the queue for decayed fair
 * share, as a JSON object {owner: weight}; null, the default, weighs every owner 1.
 */
export class AddQueueOwnerWeights1796420000000 implements MigrationInterface {
  name = 'AddQueueOwnerWeights1796420000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE queues ADD COLUMN owner_weights jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE queues DROP COLUMN owner_weights`);
  }
}
