import { MigrationInterface, QueryRunner } from 'typeorm';

/** API tokens (hashed), queues with priority and GPU quota, and idempotency keys for job creation. */
export class AddTokensQueuesIdempotencyKeys1764420000000 implements MigrationInterface {
  name = 'AddTokensQueuesIdempotencyKeys1764420000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE api_tokens (
        id uuid PRIMARY KEY,
        owner text NOT NULL,
        role text NOT NULL CHECK (role IN ('user', 'operator')),
        secret_sha256 text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE queues (
        name text PRIMARY KEY,
        priority int NOT NULL CHECK (priority BETWEEN 0 AND 100),
        quota_gpus int NULL CHECK (quota_gpus >= 0),
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`INSERT INTO queues (name, priority, quota_gpus, created_at, updated_at) VALUES ('default', 0, NULL, now(), now())`);
    // Jobs created before queues existed all named 'default', so the reference holds.
    await q.query(`ALTER TABLE jobs ADD CONSTRAINT jobs_queue_fk FOREIGN KEY (queue) REFERENCES queues(name)`);
    await q.query(`CREATE INDEX jobs_queue_state ON jobs (queue, state)`);
    await q.query(`CREATE INDEX jobs_owner_created_id ON jobs (owner, created_at, id)`);
    await q.query(`
      CREATE TABLE idempotency_keys (
        owner text NOT NULL,
        key text NOT NULL,
        body_sha256 text NOT NULL,
        -- Deferred: the key is claimed first (it serialises racing requests), the job row follows.
        job_id uuid NOT NULL REFERENCES jobs(id) DEFERRABLE INITIALLY DEFERRED,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (owner, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
    await q.query(`DROP INDEX jobs_owner_created_id`);
    await q.query(`DROP INDEX jobs_queue_state`);
    await q.query(`ALTER TABLE jobs DROP CONSTRAINT jobs_queue_fk`);
    await q.query(`DROP TABLE queues`);
    await q.query(`DROP TABLE api_tokens`);
  }
}
