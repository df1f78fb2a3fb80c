import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `fair_share_usage` (contract 5.4, ADR 0037): per queue and owner, the decayed GPU-seconds of
 * ranks that have ended, as of `as_of` (libs/domain usage-decay). The usage ledger adds each ended
 * rank's decayed GPU-seconds, decaying what was there from `as_of` first; the scheduler reads it,
 * decays it to now and adds what running ranks have used so far.
 */
export class AddFairShareUsage1796400000000 implements MigrationInterface {
  name = 'AddFairShareUsage1796400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE fair_share_usage (
      queue text NOT NULL, owner text NOT NULL,
      gpu_seconds double precision NOT NULL, as_of timestamptz NOT NULL,
      PRIMARY KEY (queue, owner))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE fair_share_usage`);
  }
}
