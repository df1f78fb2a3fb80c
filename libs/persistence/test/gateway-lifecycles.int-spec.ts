import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import {
  ClusterUtilisationStore,
  NodeLiveStore,
  RateLimitBuckets,
  autocommit,
  createJobs,
  deleteEmptyQueue,
  deleteJobsFinishedBefore,
  gpuCapacityByModel,
  insertApiToken,
  insertQueue,
  isDatabaseUnavailable,
  loadApiTokensChangedSince,
  loadNodeRacks,
  loadNodesChangedSince,
  removeNode,
  revokeApiToken,
} from '@gantry/persistence';
import { makeJob, makeNode, openDataSource, openRedis, placeJob, testSuite, uniqueTag } from '@gantry/testing';

let ds: DataSource;
let redis: Redis;
beforeAll(async () => {
  ds = await openDataSource();
  redis = await openRedis();
});
afterAll(async () => {
  await ds.query(`DELETE FROM outbox WHERE topic = 'test.lifecycles'`);
  await ds.destroy();
  redis.disconnect();
});

describe('removeNode', () => {
  it('removes a node without live attempts from every read, tells the change feed, and refuses one with a live attempt', async () => {
    const rack = uniqueTag('rack');
    const gone = uniqueTag('GPU');
    const [idle, busy] = [await makeNode().rack(rack).gpus(4, gone).insert(ds), await makeNode().rack(rack).gpus(4, gone).insert(ds)];
    // A live attempt on the busy node, placed as the scheduler places it.
    await placeJob(ds, await makeJob().insert(ds), [busy.id]);
    await ds.query(`INSERT INTO node_events (node_id, type, at) VALUES ($1, 'CORDONED', now())`, [idle.id]);
    const before = await loadNodesChangedSince(autocommit(ds), null);

    expect(await removeNode(ds, busy.id, new Date())).toBe('busy');
    expect(await removeNode(ds, idle.id, new Date())).toBe('removed');
    expect(await removeNode(ds, idle.id, new Date())).toBe('not-found');

    expect((await loadNodeRacks(autocommit(ds))).filter((n) => n.rack === rack).map((n) => n.nodeId)).toEqual([busy.id]);
    expect((await gpuCapacityByModel(autocommit(ds))).find((c) => c.gpuModel === gone)).toMatchObject({ nodes: 1, total: 4 });
    const feed = await loadNodesChangedSince(autocommit(ds), before.horizon);
    expect(feed.removed).toContain(idle.id);
    expect(feed.nodes.map((n) => n.id)).not.toContain(idle.id);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM node_events WHERE node_id = $1`, [idle.id]);
    expect(n).toBe(0);

    // Registered again: the row is back, and the feed no longer calls it removed.
    await makeNode().id(idle.id).rack(rack).insert(ds);
    const again = await loadNodesChangedSince(autocommit(ds), before.horizon);
    expect(again.removed).not.toContain(idle.id);
    expect(again.nodes.map((x) => x.id)).toContain(idle.id);
  });
});

describe('NodeLiveStore.forget', () => {
  it('takes a node out of the last-seen index and the utilisation sums, and its next beat is first-seen again', async () => {
    // A Redis db of its own: the sums and the last-seen index are keyspace-wide.
    const db = new Redis(testSuite('persistence-gateway-lifecycles').redisUrl);
    await db.flushdb();
    const live = new NodeLiveStore(db, 600_000);
    const sums = new ClusterUtilisationStore(db);
    const at = Date.now();
    const beat = (nodeId: string) => ({
      nodeId,
      bootId: 'b',
      seq: at,
      sentAt: at,
      receivedAt: at,
      running: '[]',
      telemetry: '{}',
      contribution: { gpus: 2, gpuUtilMilli: 1000, cpuUtilMilli: 500 },
    });
    expect((await live.recordBeats([beat('n1'), beat('n2')])).firstSeen.sort()).toEqual(['n1', 'n2']);
    expect(await sums.totals()).toEqual({ nodes: 2, gpus: 4, gpuUtilMilli: 2000, cpuUtilMilli: 1000 });
    expect(await live.forget('n1')).toBe(true);
    expect(await sums.totals()).toEqual({ nodes: 1, gpus: 2, gpuUtilMilli: 1000, cpuUtilMilli: 500 });
    expect([...(await live.allLastSeen()).keys()]).toEqual(['n2']);
    expect(await live.forget('n1')).toBe(false);
    expect(
      await live.recordBeats([
        { ...beat('n1'), seq: at + 1 },
        { ...beat('n2'), seq: at + 1 },
      ]),
    ).toEqual({ written: [true, true], firstSeen: ['n1'] });
    db.disconnect();
  });
});

describe('RateLimitBuckets (the token bucket in Redis)', () => {
  it('hands out the burst at once, then refills at the rate, and says when the next token comes', async () => {
    const buckets = new RateLimitBuckets(redis);
    const name = uniqueTag('bucket');
    expect(await buckets.take(name, 10, 20, 15)).toEqual({ granted: 15, remaining: 5, retryAfterMs: 0 });
    expect(await buckets.take(name, 10, 20, 15)).toMatchObject({ granted: 5, remaining: 0 });
    const empty = await buckets.take(name, 10, 20, 1);
    expect(empty.granted).toBe(0);
    // A token every 100 ms at 10/s.
    expect(empty.retryAfterMs).toBeGreaterThan(0);
    expect(empty.retryAfterMs).toBeLessThanOrEqual(100);
    await new Promise((r) => setTimeout(r, 350));
    const refilled = await buckets.take(name, 10, 20, 100);
    expect(refilled.granted).toBeGreaterThanOrEqual(3);
    expect(refilled.granted).toBeLessThanOrEqual(5);
    // Never more than the burst, however long it rested.
    const other = uniqueTag('bucket');
    await buckets.take(other, 1000, 20, 1);
    await new Promise((r) => setTimeout(r, 100));
    expect((await buckets.take(other, 1000, 20, 1000)).granted).toBe(20);
    expect(await redis.pttl(`gantry:rate:${other}`)).toBeGreaterThan(0);
  });
});

describe('tokens', () => {
  it('the change feed returns new and revoked tokens once, through the horizon', async () => {
    const first = await loadApiTokensChangedSince(autocommit(ds), null);
    const id = randomUUID();
    await insertApiToken(autocommit(ds), {
      id,
      owner: 'o',
      role: 'user',
      description: 'd',
      createdAt: new Date(),
      expiresAt: null,
      secretSha256: uniqueTag('h'),
    });
    const created = await loadApiTokensChangedSince(autocommit(ds), first.horizon);
    expect(created.tokens.map((t) => t.id)).toContain(id);
    const quiet = await loadApiTokensChangedSince(autocommit(ds), created.horizon);
    expect(quiet.tokens.map((t) => t.id)).not.toContain(id);
    const revoked = await revokeApiToken(autocommit(ds), id, new Date());
    expect(revoked?.revokedAt).toBeInstanceOf(Date);
    const after = await loadApiTokensChangedSince(autocommit(ds), quiet.horizon);
    expect(after.tokens.find((t) => t.id === id)?.revokedAt).toEqual(revoked!.revokedAt);
    expect((await revokeApiToken(autocommit(ds), id, new Date(Date.now() + 5000)))!.revokedAt).toEqual(revoked!.revokedAt);
  });
});

describe('queues', () => {
  const create = (queue: string, owner: string, anyQueue = false) =>
    createJobs(
      autocommit(ds),
      [{ job: { ...makeJob().queue(queue).owner(owner).build(), id: randomUUID() }, idempotency: null, anyQueue }],
      new Date(),
      60_000,
    );

  it("a queue with allowed owners takes only their jobs (and anyone's with anyQueue)", async () => {
    const queue = uniqueTag('q');
    await insertQueue(autocommit(ds), { name: queue, priority: 1, quotaGpus: null, allowedOwners: ['a'] }, new Date());
    expect((await create(queue, 'a'))[0].kind).toBe('created');
    expect((await create(queue, 'b'))[0].kind).toBe('queue-forbidden');
    expect((await create(queue, 'b', true))[0].kind).toBe('created');
    expect((await create(uniqueTag('none'), 'a'))[0].kind).toBe('unknown-queue');
  });

  it('deleteEmptyQueue refuses a queue with live jobs, waits for a create in flight, and keeps finished jobs', async () => {
    const queue = uniqueTag('q');
    await insertQueue(autocommit(ds), { name: queue, priority: 1, quotaGpus: null }, new Date());
    expect(await deleteEmptyQueue(ds, uniqueTag('none'))).toBe('not-found');
    // A create holds the queue's key-share lock until it commits: the delete waits, then sees the job.
    const qr = ds.createQueryRunner();
    await qr.connect();
    await qr.startTransaction();
    await qr.query(`SELECT name FROM queues WHERE name = $1 FOR KEY SHARE`, [queue]);
    const job = makeJob().queue(queue).build();
    await qr.query(
      `INSERT INTO jobs (id, owner, queue, name, image, command, env, labels, gpus, cpu_cores, memory_mib, nodes, max_retries, state, created_at, updated_at)
      VALUES ($1, 'o', $2, 'n', 'i', '[]', '{}', '{}', 0, 1, 1, 1, 0, 'QUEUED', now(), now())`,
      [job.id, queue],
    );
    const deleting = deleteEmptyQueue(ds, queue);
    await new Promise((r) => setTimeout(r, 200));
    await qr.commitTransaction();
    await qr.release();
    expect(await deleting).toBe('not-empty');
    await ds.query(`UPDATE jobs SET state = 'CANCELLED', finished_at = now() WHERE id = $1`, [job.id]);
    expect(await deleteEmptyQueue(ds, queue)).toBe('deleted');
    const [row] = await ds.query(`SELECT queue FROM jobs WHERE id = $1`, [job.id]);
    expect(row.queue).toBe(queue);
  });
});

describe('deleteJobsFinishedBefore', () => {
  it('deletes finished jobs past the cutoff with their events, attempts and keys, in batches, and nothing else', async () => {
    const old = new Date(Date.now() - 3_600_000);
    const owner = uniqueTag('o');
    const created = await createJobs(
      autocommit(ds),
      [1, 2, 3].map((i) => ({ job: { ...makeJob().owner(owner).build(), id: randomUUID() }, idempotency: { key: `k${i}`, bodySha256: 'h' } })),
      new Date(),
      86_400_000,
    );
    const jobs = created.map((c) => (c as { job: { id: string } }).job);
    // One key unexpired (created when keys lived longer), one without the job knowing it (created before jobs carried it).
    await ds.query(`UPDATE jobs SET idempotency_key = NULL WHERE id = $1`, [jobs[2].id]);
    await ds.query(`UPDATE idempotency_keys SET expires_at = $2 WHERE job_id = $1`, [jobs[2].id, old]);
    const [recent, queued] = [await makeJob().insert(ds), await makeJob().insert(ds)];
    for (const j of jobs) await ds.query(`UPDATE jobs SET state = 'SUCCEEDED', finished_at = $2 WHERE id = $1`, [j.id, old]);
    await ds.query(`UPDATE jobs SET state = 'FAILED', finished_at = now() WHERE id = $1`, [recent.id]);
    const cutoff = new Date(Date.now() - 60_000);
    expect(await deleteJobsFinishedBefore(autocommit(ds), cutoff, 2, new Date())).toBe(2);
    while ((await deleteJobsFinishedBefore(autocommit(ds), cutoff, 2, new Date())) > 0);
    const left = await ds.query(`SELECT id FROM jobs WHERE id = ANY($1::uuid[])`, [[...jobs, recent, queued].map((j) => j.id)]);
    expect(left.map((r: { id: string }) => r.id).sort()).toEqual([recent.id, queued.id].sort());
    for (const table of ['job_events', 'idempotency_keys']) {
      const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM ${table} WHERE job_id = ANY($1::uuid[])`, [jobs.map((j) => j.id)]);
      expect({ table, n }).toEqual({ table, n: 0 });
    }
  });
});

describe('isDatabaseUnavailable', () => {
  it('knows a statement timeout, the pool acquire timeout and a refused connection, and nothing about bad data', async () => {
    const timedOut = await ds.transaction(async (m) => {
      await m.query(`SET LOCAL statement_timeout = 50`);
      return m.query(`SELECT pg_sleep(1)`).catch((e: unknown) => e);
    });
    expect(isDatabaseUnavailable(timedOut)).toBe(true);
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(true);
    const unique = await ds.query(`INSERT INTO queues (name, priority, created_at, updated_at) VALUES ('default', 0, now(), now())`).catch((e: unknown) => e);
    expect(isDatabaseUnavailable(unique)).toBe(false);
  });
});
