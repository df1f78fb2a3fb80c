import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { JobCreation, autocommit, createJobs, findIdempotencyKeys, keyOf, sweepIdempotencyKeys } from '@gantry/persistence';
import { makeJob, openDataSource, uniqueTag } from '@gantry/testing';

let ds: DataSource;
beforeAll(async () => (ds = await openDataSource()));
afterAll(async () => ds.destroy());

const TTL = 24 * 3600_000;

const create = (requests: JobCreation[], at = new Date()) => createJobs(autocommit(ds), requests, at, TTL);

function creation(owner: string, over: { key?: string; body?: string; queue?: string } = {}): JobCreation {
  const job = {
    ...makeJob()
      .owner(owner)
      .queue(over.queue ?? 'default')
      .build(),
    id: randomUUID(),
  };
  return { job, idempotency: over.key ? { key: over.key, bodySha256: over.body ?? 'h' } : null };
}

describe('idempotency keys', () => {
  it('a key is claimed once; later requests with it see the first body and job', async () => {
    const owner = uniqueTag('o');
    const [first] = await create([creation(owner, { key: 'k', body: 'hash-1' })]);
    expect(first.kind).toBe('created');
    const firstJob = (first as { job: { id: string } }).job;
    expect(await create([creation(owner, { key: 'k', body: 'hash-1' })])).toEqual([{ kind: 'replayed', job: expect.objectContaining({ id: firstJob.id }) }]);
    expect(await create([creation(owner, { key: 'k', body: 'hash-2' })])).toEqual([{ kind: 'key-mismatch' }]);
    expect(await findIdempotencyKeys(autocommit(ds), [{ owner, key: 'k' }])).toEqual(
      new Map([[keyOf(owner, 'k'), { bodySha256: 'hash-1', jobId: firstJob.id }]]),
    );
  });

  it('an expired key is taken over as new, and the sweep deletes expired keys only', async () => {
    const owner = uniqueTag('o');
    const t0 = new Date(Date.now() - 2 * TTL);
    await create([creation(owner, { key: 'old' }), creation(owner, { key: 'stale' })], t0);
    await create([creation(owner, { key: 'fresh' })]);
    expect((await create([creation(owner, { key: 'old' })])).map((o) => o.kind)).toEqual(['created']);

    const swept = await sweepIdempotencyKeys(autocommit(ds), new Date());
    expect(swept).toBeGreaterThanOrEqual(1);
    const left = await ds.query(`SELECT key FROM idempotency_keys WHERE owner = $1 ORDER BY key`, [owner]);
    expect(left.map((r: { key: string }) => r.key)).toEqual(['fresh', 'old']);
  });

  it('a key cannot point at a job that does not exist (checked at commit)', async () => {
    await expect(
      ds.query(`INSERT INTO idempotency_keys (owner, key, body_sha256, job_id, created_at, expires_at) VALUES ($1, 'k', 'h', $2, now(), now())`, [
        uniqueTag('o'),
        randomUUID(),
      ]),
    ).rejects.toThrow(/foreign key/);
  });

  it('racing batches claiming one key make one job, and every request names it', async () => {
    const owner = uniqueTag('o');
    const outs = await Promise.all(Array.from({ length: 8 }, () => create([creation(owner, { key: 'race' })])));
    const kinds = outs.map(([o]) => o.kind).sort();
    expect(kinds).toEqual(['created', ...Array(7).fill('replayed')]);
    const ids = new Set(outs.map(([o]) => (o as { job: { id: string } }).job.id));
    expect(ids.size).toBe(1);
    const rows = await ds.query(`SELECT count(*)::int AS n FROM jobs WHERE owner = $1`, [owner]);
    expect(rows[0].n).toBe(1);
  });
});

describe('createJobs (one batch, one statement)', () => {
  it('answers each request on its own: created, replayed, key mismatch, unknown queue', async () => {
    const owner = uniqueTag('o');
    const [earlier] = await create([creation(owner, { key: 'used', body: 'b1' })]);
    expect(earlier.kind).toBe('created');
    const earlierJob = (earlier as { job: { id: string } }).job;

    const batch = [
      creation(owner), // no key
      creation(owner, { key: 'new' }),
      creation(owner, { key: 'used', body: 'b1' }),
      creation(uniqueTag('other'), { key: 'used', body: 'b1' }), // keys are per owner
      creation(owner, { key: 'no-queue', queue: uniqueTag('missing') }),
      creation(owner, { queue: uniqueTag('missing') }),
    ];
    const out = await create(batch, new Date());
    expect(out.map((o) => o.kind)).toEqual(['created', 'created', 'replayed', 'created', 'unknown-queue', 'unknown-queue']);
    expect(out[2]).toMatchObject({ job: { id: earlierJob.id } });

    const mismatch = await create([creation(owner, { key: 'new', body: 'other' })]);
    expect(mismatch).toEqual([{ kind: 'key-mismatch' }]);

    // What was written: exactly the created jobs, each with one CREATED event; no key for the unknown queue.
    const created = out.filter((o) => o.kind === 'created').map((o) => (o as { job: { id: string } }).job.id);
    const rows = await ds.query(
      `SELECT j.id, (SELECT count(*)::int FROM job_events e WHERE e.job_id = j.id) AS events FROM jobs j WHERE j.id = ANY($1::uuid[])`,
      [batch.map((b) => b.job.id)],
    );
    expect(rows.map((r: { id: string }) => r.id).sort()).toEqual([...created].sort());
    for (const r of rows) expect(r).toMatchObject({ events: 1 });
    expect(await findIdempotencyKeys(autocommit(ds), [{ owner, key: 'no-queue' }])).toEqual(new Map());
  });
});
