import { MigrationInterface, QueryRunner } from 'typeorm';

/** Leases for singleton loops (the failure detector, sweeps), with a fencing epoch. */
export class AddLeaderLeases1764430000000 implements MigrationInterface {
  name = 'AddLeaderLeases1764430000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE leader_leases (
        name text PRIMARY KEY,
        holder text NOT NULL,
        -- Bumped on every change of holder: the fencing token a leader's writes are checked against.
        epoch bigint NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE leader_leases`);
  }
}
