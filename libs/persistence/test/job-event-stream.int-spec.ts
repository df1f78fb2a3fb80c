import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { DataSource } from 'typeorm';
import { STREAM_ORIGIN, StreamPosition, autocommit, currentStreamPosition, readJobEventStream } from '@gantry/persistence';
import { openDataSource } from '@gantry/testing';

let ds: DataSource;

beforeAll(async () => {
  ds = await openDataSource();
});

afterAll(async () => {
  await ds?.destroy();
});

async function connection(): Promise<PoolClient> {
  return (ds.driver as PostgresDriver).master.connect();
}

/**
 * A job the tests write events for by hand: ended already, and with its event seqs far ahead, so
 * that no scheduler of a later suite (the test database is shared) tries to place it and collides
 * with these events.
 */
async function insertJob(id: string): Promise<void> {
  await autocommit(ds).rows(
    `INSERT INTO jobs (id, owner, queue, name, image, command, env, labels, gpus, gpu_model, cpu_cores, memory_mib, nodes, max_retries, state, created_at, updated_at, finished_at, last_event_seq)
     VALUES ($1, 'stream-test', 'default', 'n', 'i', '["true"]', '{}', '{}', 0, NULL, 1, 64, 1, 0, 'CANCELLED', now(), now(), now(), 1000)`,
    [id],
  );
}

const insertEvent = (c: PoolClient, jobId: string, seq: number) =>
  c.query(`INSERT INTO job_events (job_id, seq, type, at) VALUES ($1, $2, 'RECONCILED', now())`, [jobId, seq]);

/** Everything the stream holds for these jobs after `from`, as "job:seq". */
async function read(jobs: string[], from: StreamPosition): Promise<string[]> {
  const out: string[] = [];
  let at = from;
  for (;;) {
    const page = await readJobEventStream(autocommit(ds), at, 2);
    out.push(...page.filter((e) => jobs.includes(e.jobId)).map((e) => `${jobs.indexOf(e.jobId)}:${e.seq}`));
    if (page.length < 2) return out;
    at = page[page.length - 1].position;
  }
}

describe('the job event stream order (ADR 0028)', () => {
  it('never hands out a row that a transaction holding an older id can still precede (ids are not commit order)', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await insertJob(a);
    await insertJob(b);
    const from = await currentStreamPosition(autocommit(ds));
    const [older, newer] = [await connection(), await connection()];
    try {
      await older.query('BEGIN');
      await older.query('SELECT pg_current_xact_id()'); // takes the lower transaction id...
      await newer.query('BEGIN');
      await insertEvent(newer, b, 1);
      await newer.query('COMMIT'); // ...but commits last
      await insertEvent(older, a, 1);
      // b's event is committed, but a reader that handed it out now and moved past it would skip a's.
      expect(await read([a, b], from)).toEqual([]);
      await older.query('COMMIT');
      expect(await read([a, b], from)).toEqual(['0:1', '1:1']);
    } finally {
      older.release();
      newer.release();
    }
  });

  it("keeps a job's seq order even when its next event is written by a transaction with an older id", async () => {
    const job = randomUUID();
    const other = randomUUID();
    await insertJob(job);
    await insertJob(other);
    const from = await currentStreamPosition(autocommit(ds));
    const [low, mid, high] = [await connection(), await connection(), await connection()];
    try {
      for (const c of [low, mid, high]) {
        await c.query('BEGIN');
        await c.query('SELECT pg_current_xact_id()'); // ids in this order: low < mid < high
      }
      await insertEvent(high, job, 1);
      await high.query('COMMIT');
      await insertEvent(low, job, 2); // the job's next event, from the oldest transaction
      await low.query('COMMIT');
      await insertEvent(mid, other, 1); // still open: holds the horizon between the two
      // Stamped by transaction id alone, seq 2 (low) would be handed out before seq 1 (high).
      expect(await read([job, other], from)).toEqual([]);
      await mid.query('COMMIT');
      const order = await read([job, other], from);
      expect(order.filter((x) => x.startsWith('0:'))).toEqual(['0:1', '0:2']);
      expect(order).toHaveLength(3);
    } finally {
      for (const c of [low, mid, high]) c.release();
    }
  });

  it('pages through everything from the origin without repeats', async () => {
    const job = randomUUID();
    await insertJob(job);
    const c = await connection();
    try {
      for (let seq = 1; seq <= 5; seq++) await insertEvent(c, job, seq);
    } finally {
      c.release();
    }
    expect(await read([job], STREAM_ORIGIN)).toEqual(['0:1', '0:2', '0:3', '0:4', '0:5']);
  });
});
