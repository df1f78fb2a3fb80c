import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every node row carries the id of the transaction that last wrote it (`changed_xid`, set by a
 * trigger, so no writer can forget it), indexed: the scheduler reads only the nodes changed since
 * its last read through the index. Judging `age(xmin)` row by row scanned the whole table each
 * cycle (ADR 0012). xid8 does not wrap around.
 */
export class TrackNodeChanges1764480000000 implements MigrationInterface {
  name = 'TrackNodeChanges1764480000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE nodes ADD COLUMN changed_xid xid8 NOT NULL DEFAULT pg_current_xact_id()`);
    await q.query(`
      CREATE FUNCTION nodes_stamp_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.changed_xid := pg_current_xact_id();
        RETURN NEW;
      END $$`);
    await q.query(`CREATE TRIGGER nodes_stamp_change BEFORE UPDATE ON nodes FOR EACH ROW EXECUTE FUNCTION nodes_stamp_change()`);
    await q.query(`CREATE INDEX nodes_changed ON nodes (changed_xid)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX nodes_changed`);
    await q.query(`DROP TRIGGER nodes_stamp_change ON nodes`);
    await q.query(`DROP FUNCTION nodes_stamp_change()`);
    await q.query(`ALTER TABLE nodes DROP COLUMN changed_xid`);
  }
}
