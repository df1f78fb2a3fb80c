import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A commit-safe global order over job events, for the live streams and the Kafka feed (ADR 0028).
 *
 * Every event row gets `stream_xid`: the id of the transaction that wrote it, raised to its job's
 * previous event's `stream_xid` when that one is higher. A BEFORE INSERT trigger sets it, so none of
 * the statements that append events (creation, placement, reports, cancels, evictions) has to know.
 * Readers walk `(stream_xid, job_id, seq)` and stop below the xmin of their snapshot: a transaction
 * below it has ended, so no row under that horizon can still appear, and each job's events keep
 * their seq order because a job's `stream_xid` never goes down. Bigserial ids would not do: an id
 * taken first can commit last. xid8 does not wrap around.
 */
export class AddJobEventStream1764510000000 implements MigrationInterface {
  name = 'AddJobEventStream1764510000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE job_events ADD COLUMN stream_xid xid8 NOT NULL DEFAULT pg_current_xact_id()`);
    await q.query(`
      CREATE FUNCTION job_events_stamp_stream() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        own xid8 := pg_current_xact_id();
        prev xid8;
      BEGIN
        -- VOLATILE: this query takes a fresh snapshot, so it sees the job's previous event, whose
        -- writer committed before ours could reserve the next seq (the job row's compare-and-set).
        SELECT stream_xid INTO prev FROM job_events WHERE job_id = NEW.job_id ORDER BY seq DESC LIMIT 1;
        NEW.stream_xid := CASE WHEN prev IS NOT NULL AND prev > own THEN prev ELSE own END;
        RETURN NEW;
      END $$`);
    await q.query(`CREATE TRIGGER job_events_stamp_stream BEFORE INSERT ON job_events FOR EACH ROW EXECUTE FUNCTION job_events_stamp_stream()`);
    await q.query(`CREATE INDEX job_events_stream ON job_events (stream_xid, job_id, seq)`);
    // Where each single-writer reader of the stream (the Kafka publisher) has got to.
    await q.query(`
      CREATE TABLE job_event_stream_offsets (
        name text PRIMARY KEY,
        stream_xid xid8 NOT NULL,
        job_id uuid NOT NULL,
        seq int NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE job_event_stream_offsets`);
    await q.query(`DROP INDEX job_events_stream`);
    await q.query(`DROP TRIGGER job_events_stamp_stream ON job_events`);
    await q.query(`DROP FUNCTION job_events_stamp_stream()`);
    await q.query(`ALTER TABLE job_events DROP COLUMN stream_xid`);
  }
}
