import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { TokenStreamSlots } from '@gantry/persistence';
import { openRedis, uniqueTag } from '@gantry/testing';
import { waitFor } from '@gantry/stack';

/* The per-token stream limit's shared state (ADR 0036) against a real Redis: two instances stand for two gateway replicas. */
let redis: Redis;
let other: Redis;
beforeAll(async () => {
  redis = await openRedis();
  other = await openRedis();
});
afterAll(() => {
  redis.disconnect();
  other.disconnect();
});

describe('TokenStreamSlots', () => {
  it('grants exactly `limit` slots to a token across replicas asking at once, and none beyond', async () => {
    const token = uniqueTag('tok');
    const replicas = [new TokenStreamSlots(redis, 30_000), new TokenStreamSlots(other, 30_000)];
    const grants = await Promise.all(Array.from({ length: 50 }, (_, i) => replicas[i % 2].acquire(token, randomUUID(), 32)));
    expect(grants.filter((g) => g.granted)).toHaveLength(32);
    expect(grants.filter((g) => !g.granted).every((g) => g.open === 32)).toBe(true);
    expect(await replicas[0].count(token)).toBe(32);
    // Another token is counted apart.
    expect((await replicas[1].acquire(uniqueTag('tok'), randomUUID(), 32)).granted).toBe(true);
  });

  it('frees a slot when its stream is released', async () => {
    const token = uniqueTag('tok');
    const slots = new TokenStreamSlots(redis, 30_000);
    const first = randomUUID();
    expect((await slots.acquire(token, first, 1)).granted).toBe(true);
    expect((await slots.acquire(token, randomUUID(), 1)).granted).toBe(false);
    await slots.release(token, first);
    expect((await slots.acquire(token, randomUUID(), 1)).granted).toBe(true);
  });

  it('stops counting a stream whose lease was not renewed (its replica died), and keeps one that was', async () => {
    const token = uniqueTag('tok');
    const leaseMs = 400;
    const slots = new TokenStreamSlots(redis, leaseMs);
    const dead = randomUUID();
    const alive = randomUUID();
    expect((await slots.acquire(token, dead, 2)).granted).toBe(true);
    expect((await slots.acquire(token, alive, 2)).granted).toBe(true);
    expect((await slots.acquire(token, randomUUID(), 2)).granted).toBe(false);
    const t0 = Date.now();
    // Only `alive` is renewed, every 100 ms, until `dead` has gone.
    await waitFor(
      'the unrenewed lease to run out',
      async () => {
        await slots.renew(new Map([[token, [alive]]]));
        return (await slots.count(token)) === 1 || undefined;
      },
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(Date.now() - t0).toBeGreaterThanOrEqual(leaseMs - 50);
    expect((await slots.acquire(token, randomUUID(), 2)).granted).toBe(true);
    expect((await slots.acquire(token, randomUUID(), 2)).granted).toBe(false);
    // The key itself goes with its last lease: nothing a crashed replica left stays for ever.
    await waitFor('the key to expire', async () => (await redis.exists(`gantry:streams:${token}`)) === 0 || undefined, { timeoutMs: 5_000, intervalMs: 100 });
  });

  it('counts again, at its next renewal, a stream let through while Redis was not asked', async () => {
    const token = uniqueTag('tok');
    const slots = new TokenStreamSlots(redis, 30_000);
    await slots.renew(new Map([[token, [randomUUID(), randomUUID()]]]));
    expect(await slots.count(token)).toBe(2);
    expect((await slots.acquire(token, randomUUID(), 2)).granted).toBe(false);
  });
});
