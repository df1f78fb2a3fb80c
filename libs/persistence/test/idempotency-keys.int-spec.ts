import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import {
  JobCreation, claimIdempotencyKeys, createJobs, findIdempotencyKeys, inTransaction, keyOf, sweepIdempotencyKeys,
} from '@gantry/persistence';
import { makeJob, openDataSource, uniqueTag } from '@gantry/testing';

let ds: DataSource;
beforeAll(async () => (ds = await openDataSource()));
afterAll(async () => ds.destroy());

const TTL = 24 * 3600_000;

function creation(owner: string, over: { key?: string; body?: string; queue?: string } = {}): JobCreation {
  const job = { ...makeJob().owner(owner).queue(over.queue ?? 'default').build(), id: randomUUID() };
  return {
    job,
    message: { topic: 'gantry.internal.job-lifecycle.v1', key: job.id, value: { type: 'JOB_CREATED', jobId: job.id, at: 1 } },
    idempotency: over.key ? { key: over.key, bodySha256: over.body ?? 'h' } : null,
  };
}

describe('idempotency keys', () => {
  it('a key is claimed once; later claims see the first body and job', async () => {
    const owner = uniqueTag('o');
    const job = await makeJob().insert(ds);
    const t0 = new Date();
    const claim = (body: string) => inTransaction(ds, (sql) => claimIdempotencyKeys(sql, [{ owner, key: 'k', bodySha256: body, jobId: job.id }], t0, TTL));
    expect(await claim('hash-1')).toEqual(new Set([keyOf(owner, 'k')]));
    expect(await claim('hash-2')).toEqual(new Set());
    expect(await inTransaction(ds, (sql) => findIdempotencyKeys(sql, [{ owner, key: 'k' }]))).toEqual(new Map([[keyOf(owner, 'k'), { bodySha256: 'hash-1', jobId: job.id }]]));
  });

  it('an expired key is taken over as new, and the sweep deletes expired keys only', async () => {
    const owner = uniqueTag('o');
    const first = await makeJob().insert(ds);
    const second = await makeJob().insert(ds);
    const t0 = new Date(Date.now() - 2 * TTL);
    const claim = (key: string, jobId: string, at: Date) => inTransaction(ds, (sql) => claimIdempotencyKeys(sql, [{ owner, key, bodySha256: 'h', jobId }], at, TTL));
    await claim('old', first.id, t0);
    await claim('fresh', first.id, new Date());
    expect((await claim('old', second.id, new Date())).size).toBe(1);

    await claim('stale', first.id, t0);
    const swept = await inTransaction(ds, (sql) => sweepIdempotencyKeys(sql, new Date()));
    expect(swept).toBeGreaterThanOrEqual(1);
    const left = await ds.query(`SELECT key FROM idempotency_keys WHERE owner = $1 ORDER BY key`, [owner]);
    expect(left.map((r: { key: string }) => r.key)).toEqual(['fresh', 'old']);
  });

  it('a key cannot point at a job that does not exist (checked at commit)', async () => {
    await expect(
      inTransaction(ds, (sql) => claimIdempotencyKeys(sql, [{ owner: uniqueTag('o'), key: 'k', bodySha256: 'h', jobId: randomUUID() }], new Date(), TTL)),
    ).rejects.toThrow(/foreign key/);
  });
});

describe('createJobs (one batch, one transaction)', () => {
  it('answers each request on its own: created, replayed, key mismatch, unknown queue', async () => {
    const owner = uniqueTag('o');
    const [earlier] = await inTransaction(ds, (sql) => createJobs(sql, [creation(owner, { key: 'used', body: 'b1' })], new Date(), TTL));
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
    const out = await inTransaction(ds, (sql) => createJobs(sql, batch, new Date(), TTL));
    expect(out.map((o) => o.kind)).toEqual(['created', 'created', 'replayed', 'created', 'unknown-queue', 'unknown-queue']);
    expect(out[2]).toMatchObject({ job: { id: earlierJob.id } });

    const mismatch = await inTransaction(ds, (sql) => createJobs(sql, [creation(owner, { key: 'new', body: 'other' })], new Date(), TTL));
    expect(mismatch).toEqual([{ kind: 'key-mismatch' }]);

    // What was written: exactly the created jobs, each with one CREATED event and one outbox row; no key for the unknown queue.
    const created = out.filter((o) => o.kind === 'created').map((o) => (o as { job: { id: string } }).job.id);
    const rows = await ds.query(
      `SELECT j.id, (SELECT count(*)::int FROM job_events e WHERE e.job_id = j.id) AS events,
              (SELECT count(*)::int FROM outbox o WHERE o.key = j.id::text) AS outbox
       FROM jobs j WHERE j.id = ANY($1::uuid[])`, [batch.map((b) => b.job.id)]);
    expect(rows.map((r: { id: string }) => r.id).sort()).toEqual([...created].sort());
    for (const r of rows) expect(r).toMatchObject({ events: 1, outbox: 1 });
    await ds.query(`DELETE FROM outbox WHERE key = ANY($1::text[])`, [created]);
    expect(await inTransaction(ds, (sql) => findIdempotencyKeys(sql, [{ owner, key: 'no-queue' }]))).toEqual(new Map());
  });
});
