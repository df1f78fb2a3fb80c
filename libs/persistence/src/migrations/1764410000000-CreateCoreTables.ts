import { MigrationInterface, QueryRunner } from 'typeorm';

/** Jobs, their append-only events, attempts per node, nodes with versioned allocations, and the outbox. */
export class CreateCoreTables1764410000000 implements MigrationInterface {
  name = 'CreateCoreTables1764410000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs (
        id uuid PRIMARY KEY,
        owner text NOT NULL,
        queue text NOT NULL,
        name text NOT NULL,
        image text NOT NULL,
        command jsonb NOT NULL,
        env jsonb NOT NULL,
        labels jsonb NOT NULL,
        gpus int NOT NULL CHECK (gpus >= 0),
        gpu_model text NULL,
        cpu_cores int NOT NULL CHECK (cpu_cores >= 0),
        memory_mib bigint NOT NULL CHECK (memory_mib >= 0),
        nodes int NOT NULL CHECK (nodes >= 1),
        max_retries int NOT NULL CHECK (max_retries >= 0),
        state text NOT NULL CHECK (state IN ('QUEUED','SCHEDULED','RUNNING','SUCCEEDED','FAILED','CANCELLED')),
        cancel_requested boolean NOT NULL DEFAULT false,
        attempt int NOT NULL DEFAULT 0,
        node_ids text[] NOT NULL DEFAULT '{}',
        pending_reason text NULL,
        exit_code int NULL,
        reason text NULL,
        version bigint NOT NULL DEFAULT 1,
        last_event_seq int NOT NULL DEFAULT 0,
        trace_parent text NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        started_at timestamptz NULL,
        finished_at timestamptz NULL
      )`);
    await q.query(`CREATE INDEX jobs_created_id ON jobs (created_at, id)`);
    await q.query(`CREATE INDEX jobs_queued ON jobs (created_at, id) WHERE state = 'QUEUED'`);
    await q.query(`
      CREATE TABLE job_events (
        job_id uuid NOT NULL REFERENCES jobs(id),
        seq int NOT NULL,
        type text NOT NULL,
        at timestamptz NOT NULL,
        from_state text NULL,
        to_state text NULL,
        attempt int NULL,
        node_ids text[] NULL,
        reason text NULL,
        PRIMARY KEY (job_id, seq)
      )`);
    await q.query(`
      CREATE TABLE nodes (
        id text PRIMARY KEY,
        zone text NOT NULL,
        rack text NOT NULL,
        gpu_model text NULL,
        gpus_total int NOT NULL,
        cpu_cores int NOT NULL,
        memory_mib bigint NOT NULL,
        gpus_allocated int NOT NULL DEFAULT 0,
        cpu_allocated int NOT NULL DEFAULT 0,
        memory_allocated bigint NOT NULL DEFAULT 0,
        cordoned boolean NOT NULL DEFAULT false,
        version bigint NOT NULL DEFAULT 1,
        first_seen_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        -- Allocations never go negative (a double release). They may exceed the total when a node
        -- reports less capacity than its running work holds (a GPU failed): that is a fact to
        -- record, not a write to refuse; placement's compare-and-set refuses to add to it.
        CONSTRAINT nodes_allocation_non_negative CHECK (
          gpus_allocated >= 0 AND cpu_allocated >= 0 AND memory_allocated >= 0)
      )`);
    await q.query(`
      CREATE TABLE attempt_nodes (
        job_id uuid NOT NULL REFERENCES jobs(id),
        attempt int NOT NULL,
        rank int NOT NULL,
        node_id text NOT NULL REFERENCES nodes(id),
        gpus int NOT NULL,
        cpu_cores int NOT NULL,
        memory_mib bigint NOT NULL,
        state text NOT NULL DEFAULT 'SCHEDULED',
        exit_code int NULL,
        created_at timestamptz NOT NULL,
        released_at timestamptz NULL,
        PRIMARY KEY (job_id, attempt, rank)
      )`);
    await q.query(`CREATE UNIQUE INDEX attempt_nodes_one_rank_per_node ON attempt_nodes (job_id, attempt, node_id)`);
    await q.query(`CREATE INDEX attempt_nodes_live_by_node ON attempt_nodes (node_id) WHERE released_at IS NULL`);
    await q.query(`
      CREATE TABLE outbox (
        id bigserial PRIMARY KEY,
        topic text NOT NULL,
        key text NULL,
        value text NOT NULL,
        headers jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE outbox, attempt_nodes, job_events, nodes, jobs`);
  }
}
