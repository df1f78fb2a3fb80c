import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the gateway's lifecycles need (contract §4.3):
 * - tokens gain a description, an expiry and a revocation time, and the id of the transaction that
 *   last wrote each row (`changed_xid`, kept by the same trigger function as nodes'), so every
 *   gateway replica reads only the tokens changed since its last read, several times a second;
 * - queues gain `allowed_owners` (null: everyone);
 * - a queue with finished jobs can be deleted: the foreign key from jobs goes, and the create
 *   statement takes the key-share lock on the queue row itself (what the key's trigger took per row);
 * - a node can be removed while finished attempts still name it: that foreign key goes too (a live
 *   attempt is checked under the node's row lock instead), and `removed_nodes` keeps a tombstone per
 *   removal so that readers of the node change feed (the scheduler) drop the node;
 * - finished jobs are found by age for retention, and carry their idempotency key so that it goes with them;
 * - the audit log of operators' changes.
 */
export class AddGatewayLifecycles1764500000000 implements MigrationInterface {
  name = 'AddGatewayLifecycles1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_tokens ADD COLUMN description text NULL, ADD COLUMN expires_at timestamptz NULL, ADD COLUMN revoked_at timestamptz NULL,
      ADD COLUMN changed_xid xid8 NOT NULL DEFAULT pg_current_xact_id()`);
    // nodes_stamp_change() (TrackNodeChanges) sets NEW.changed_xid whatever the table.
    await q.query(`CREATE TRIGGER api_tokens_stamp_change BEFORE UPDATE ON api_tokens FOR EACH ROW EXECUTE FUNCTION nodes_stamp_change()`);
    await q.query(`CREATE INDEX api_tokens_changed ON api_tokens (changed_xid)`);
    await q.query(`CREATE INDEX api_tokens_created_id ON api_tokens (created_at, id)`);

    await q.query(`ALTER TABLE queues ADD COLUMN allowed_owners text[] NULL`);
    await q.query(`ALTER TABLE jobs DROP CONSTRAINT jobs_queue_fk`);
    await q.query(`CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL`);
    // The job's Idempotency-Key, so that retention finds the key through its primary key (there is no index on job_id).
    await q.query(`ALTER TABLE jobs ADD COLUMN idempotency_key text NULL`);

    await q.query(`ALTER TABLE attempt_nodes DROP CONSTRAINT attempt_nodes_node_id_fkey`);
    await q.query(`
      CREATE TABLE removed_nodes (
        node_id text PRIMARY KEY,
        removed_xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
        removed_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX removed_nodes_changed ON removed_nodes (removed_xid)`);

    await q.query(`
      CREATE TABLE audit_log (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL,
        actor_owner text NOT NULL,
        actor_role text NOT NULL,
        -- null for the admin token of GANTRY_ADMIN_TOKEN, which has no row
        actor_token_id uuid NULL,
        address text NULL,
        action text NOT NULL,
        target text NOT NULL,
        details jsonb NOT NULL DEFAULT '{}'
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_log`);
    await q.query(`DROP TABLE removed_nodes`);
    await q.query(`ALTER TABLE attempt_nodes ADD CONSTRAINT attempt_nodes_node_id_fkey FOREIGN KEY (node_id) REFERENCES nodes(id)`);
    await q.query(`ALTER TABLE jobs DROP COLUMN idempotency_key`);
    await q.query(`DROP INDEX jobs_finished`);
    await q.query(`ALTER TABLE jobs ADD CONSTRAINT jobs_queue_fk FOREIGN KEY (queue) REFERENCES queues(name)`);
    await q.query(`ALTER TABLE queues DROP COLUMN allowed_owners`);
    await q.query(`DROP INDEX api_tokens_created_id`);
    await q.query(`DROP INDEX api_tokens_changed`);
    await q.query(`DROP TRIGGER api_tokens_stamp_change ON api_tokens`);
    await q.query(`ALTER TABLE api_tokens DROP COLUMN changed_xid, DROP COLUMN revoked_at, DROP COLUMN expires_at, DROP COLUMN description`);
  }
}
