import Redis from 'ioredis';
import { NodeLiveStore, REDIS_KEYS } from '@gantry/persistence';
import { openRedis, uniqueTag } from '@gantry/testing';

let redis: Redis;
let live: NodeLiveStore;
beforeAll(async () => {
  redis = await openRedis();
  live = new NodeLiveStore(redis, 120_000);
});
afterAll(() => redis.disconnect());

describe('NodeLiveStore reads of the last-seen index', () => {
  it('reads every node across pages, also where thousands share one score (one ingester batch)', async () => {
    const tag = uniqueTag('heard');
    // Scores far in the past, so other suites' nodes (heard now) come after these in score order.
    const base = 1_000 + Math.floor(Math.random() * 1_000_000);
    const expected = new Map<string, number>();
    for (let i = 0; i < 5_000; i++) expected.set(`${tag}-${i}`, base + (i < 4_500 ? 0 : i % 3));
    const pairs = [...expected].flatMap(([id, at]) => [at, id]);
    await redis.zadd(REDIS_KEYS.lastSeen, ...pairs);
    try {
      const heard = await live.heardSince(base);
      const mine = new Map([...heard].filter(([id]) => id.startsWith(`${tag}-`)));
      expect(mine).toEqual(expected);
      expect(await live.heardSince(base + 1).then((m) => [...m.keys()].filter((id) => id.startsWith(`${tag}-`)).length)).toBe(333);
      // Paced (the scheduler's background full read): the same answer, with a pause after every full page.
      let pauses = 0;
      const paced = await live.heardSince(base, { pageSize: 1_000, betweenPages: async () => void pauses++ });
      expect(new Map([...paced].filter(([id]) => id.startsWith(`${tag}-`)))).toEqual(expected);
      expect(pauses).toBeGreaterThanOrEqual(5);

      const ids = [...expected.keys(), `${tag}-never`];
      const scores = await live.lastSeenMany(ids);
      expect(scores.size).toBe(5_001);
      expect(scores.get(`${tag}-4999`)).toBe(base + (4999 % 3));
      expect(scores.get(`${tag}-never`)).toBeNull();
    } finally {
      await redis.zrem(REDIS_KEYS.lastSeen, ...expected.keys());
    }
  });
});

describe('NodeLiveStore reads of utilisation contributions', () => {
  it('answers each node in order: its last known contribution, or null for a node without one', async () => {
    const tag = uniqueTag('contrib');
    const ids = Array.from({ length: 4_500 }, (_, i) => `${tag}-${i}`);
    const p = redis.pipeline();
    ids.forEach((id, i) => {
      if (i % 7 !== 3) p.hset(REDIS_KEYS.node(id), 'kg', i % 9, 'kgu', i * 2, 'kcu', i % 1001);
    });
    p.hset(REDIS_KEYS.node(`${tag}-partial`), 'kg', 8); // a hash without the other two fields
    await p.exec();
    try {
      const got = await live.contributionsMany([...ids, `${tag}-partial`, `${tag}-never`]);
      expect(got).toHaveLength(4_502);
      ids.forEach((_, i) => expect(got[i]).toEqual(i % 7 === 3 ? null : { gpus: i % 9, gpuUtilMilli: i * 2, cpuUtilMilli: i % 1001 }));
      expect(got.slice(-2)).toEqual([null, null]);
      expect(await live.contributionsMany([])).toEqual([]);
    } finally {
      await redis.del(...ids.map((id) => REDIS_KEYS.node(id)), REDIS_KEYS.node(`${tag}-partial`));
    }
  });
});
