import { DataSource } from 'typeorm';
import { claimIdempotencyKey, inTransaction, sweepIdempotencyKeys } from '@gantry/persistence';
import { makeJob, openDataSource, uniqueTag } from '@gantry/testing';

let ds: DataSource;
beforeAll(async () => (ds = await openDataSource()));
afterAll(async () => ds.destroy());

const TTL = 24 * 3600_000;

describe('idempotency keys', () => {
  it('a key is claimed once; later claims see the first body and job', async () => {
    const owner = uniqueTag('o');
    const job = await makeJob().insert(ds);
    const t0 = new Date();
    expect(await inTransaction(ds, (sql) => claimIdempotencyKey(sql, owner, 'k', 'hash-1', job.id, t0, TTL))).toEqual({ kind: 'claimed' });
    expect(await inTransaction(ds, (sql) => claimIdempotencyKey(sql, owner, 'k', 'hash-2', job.id, t0, TTL))).toEqual({ kind: 'existing', bodySha256: 'hash-1', jobId: job.id });
  });

  it('an expired key is taken over as new, and the sweep deletes expired keys only', async () => {
    const owner = uniqueTag('o');
    const first = await makeJob().insert(ds);
    const second = await makeJob().insert(ds);
    const t0 = new Date(Date.now() - 2 * TTL);
    await inTransaction(ds, (sql) => claimIdempotencyKey(sql, owner, 'old', 'h', first.id, t0, TTL));
    await inTransaction(ds, (sql) => claimIdempotencyKey(sql, owner, 'fresh', 'h', first.id, new Date(), TTL));
    const later = new Date();
    expect(await inTransaction(ds, (sql) => claimIdempotencyKey(sql, owner, 'old', 'h2', second.id, later, TTL))).toEqual({ kind: 'claimed' });

    await inTransaction(ds, (sql) => claimIdempotencyKey(sql, owner, 'stale', 'h', first.id, t0, TTL));
    const swept = await inTransaction(ds, (sql) => sweepIdempotencyKeys(sql, new Date()));
    expect(swept).toBeGreaterThanOrEqual(1);
    const left = await ds.query(`SELECT key FROM idempotency_keys WHERE owner = $1 ORDER BY key`, [owner]);
    expect(left.map((r: { key: string }) => r.key)).toEqual(['fresh', 'old']);
  });

  it('a key cannot point at a job that does not exist (checked at commit)', async () => {
    await expect(
      inTransaction(ds, (sql) => claimIdempotencyKey(sql, uniqueTag('o'), 'k', 'h', '00000000-0000-0000-0000-000000000000', new Date(), TTL)),
    ).rejects.toThrow(/foreign key/);
  });
});
