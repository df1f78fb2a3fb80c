import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Node history (health transitions decided by the failure detector's leader, cordons) and the
 * detector's last recorded health per node, so a new leader continues from it and writes only
 * changes, never a row per beat.
 */
export class AddNodeEvents1764460000000 implements MigrationInterface {
  name = 'AddNodeEvents1764460000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE node_events (
        id bigserial PRIMARY KEY,
        node_id text NOT NULL REFERENCES nodes (id),
        -- HEALTH_CHANGED, EVICTED, CORDONED, UNCORDONED
        type text NOT NULL,
        at timestamptz NOT NULL,
        from_health text,
        to_health text,
        reason text,
        -- Jobs whose attempts on this node were ended (EVICTED).
        job_ids uuid[],
        -- The detector leader's fencing epoch for the events it writes; null for operator actions.
        epoch bigint
      )`);
    await q.query(`CREATE INDEX node_events_by_node ON node_events (node_id, id)`);
    await q.query(`
      CREATE TABLE node_health (
        node_id text PRIMARY KEY REFERENCES nodes (id),
        health text NOT NULL,
        held boolean NOT NULL,
        -- When the node was first held for its rack's partition; kept after the hold expires while it stays silent.
        held_since timestamptz,
        changed_at timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE node_health`);
    await q.query(`DROP TABLE node_events`);
  }
}
