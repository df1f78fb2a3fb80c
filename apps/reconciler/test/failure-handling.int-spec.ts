import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { JobRecord, NodeLiveStore, acquireLeadership, autocommit, findJob, holdsLeadership, inTransaction, listJobEvents, loadNodes } from '@gantry/persistence';
import { makeJob, makeNode, openDataSource, placeJob, silentLogger, testSuite, testWakeUpSender, uniqueTag } from '@gantry/testing';
import { waitFor } from '@gantry/stack';
import { AttemptLossApplier } from '../src/attempt-loss-applier';
import { ReconcilerEnv } from '../src/config';
import { FailureDetector } from '../src/failure-detector';
import { LeaderElection } from '../src/leader-election';

let ds: DataSource;
let redis: Redis;
let losses: AttemptLossApplier;

let wake: Awaited<ReturnType<typeof testWakeUpSender>>;
beforeAll(async () => {
  ds = await openDataSource();
  // A Redis db of its own: the detector reads the whole last-seen set.
  redis = new Redis(testSuite('reconciler-failure-handling').redisUrl);
  await redis.flushdb();
  wake = await testWakeUpSender('attempt-loss-test');
  losses = new AttemptLossApplier(ds, wake.sender);
  // Work other suites left placed has no live node behind it; it must not take part here.
  await ds.query(`UPDATE attempt_nodes SET released_at = now() WHERE released_at IS NULL`);
});
afterAll(async () => {
  // The detectors here took the real lease name with long leases: hand it back, or the next suite's
  // reconciler would wait out the lease before it could lead.
  await ds.query(`DELETE FROM leader_leases WHERE name = 'failure-detector' AND holder LIKE 'r-%'`);
  redis.disconnect();
  await wake.close();
  await ds.destroy();
});

async function placed(opts: { nodes?: number; maxRetries?: number; rack?: string; onNodes?: string[] } = {}): Promise<{ job: JobRecord; nodeIds: string[] }> {
  const nodeIds: string[] = [...(opts.onNodes ?? [])];
  if (!opts.onNodes) for (let i = 0; i < (opts.nodes ?? 1); i++) nodeIds.push((await makeNode().gpus(8).rack(opts.rack ?? uniqueTag('rack')).insert(ds)).id);
  const job = await makeJob().gpus(2).gang(nodeIds.length).maxRetries(opts.maxRetries ?? 0).insert(ds);
  return { job: await placeJob(ds, job, nodeIds, { running: true }), nodeIds };
}

describe('AttemptLossApplier', () => {
  it('requeues a job whose node died while retries remain, releasing its capacity', async () => {
    const { job, nodeIds } = await placed({ maxRetries: 1 });
    expect(await losses.lose(job.id, 1, nodeIds[0], 'NODE_LOST')).toBe('requeued');
    expect(await findJob(autocommit(ds), job.id)).toMatchObject({ state: 'QUEUED', attempt: 1, nodeIds: [] });
    expect((await loadNodes(autocommit(ds), nodeIds))[0].gpusAllocated).toBe(0);
    const last = (await listJobEvents(autocommit(ds), job.id, 0, 50)).pop();
    expect(last).toMatchObject({ type: 'STATE_CHANGED', fromState: 'RUNNING', toState: 'QUEUED', reason: 'NODE_LOST' });
    expect(await losses.lose(job.id, 1, nodeIds[0], 'NODE_LOST')).toBe('ignored');
  });

  it('fails the job when its retries are used up', async () => {
    const { job, nodeIds } = await placed({ maxRetries: 0 });
    expect(await losses.lose(job.id, 1, nodeIds[0], 'NODE_LOST')).toBe('failed');
    expect(await findJob(autocommit(ds), job.id)).toMatchObject({ state: 'FAILED', reason: 'NODE_LOST' });
  });

  it('loses a gang as a whole: KILL to the surviving ranks, every rank released', async () => {
    const { job, nodeIds } = await placed({ nodes: 2, maxRetries: 3 });
    await losses.lose(job.id, 1, nodeIds[0], 'NODE_LOST');
    expect((await loadNodes(autocommit(ds), nodeIds)).map((n) => n.gpusAllocated)).toEqual([0, 0]);
    const kills = (await ds.query(`SELECT value FROM outbox WHERE value::jsonb->>'jobId' = $1 AND value::jsonb->>'type' = 'KILL'`, [job.id])).map((r: { value: string }) => JSON.parse(r.value));
    expect(kills).toEqual([expect.objectContaining({ nodeId: nodeIds[1], attempt: 1, reason: 'NODE_LOST' })]);
  });

  it('a deposed leader changes nothing', async () => {
    const { job, nodeIds } = await placed({ maxRetries: 1 });
    const name = uniqueTag('lease');
    const old = (await acquireLeadership(autocommit(ds), name, 'a', 50))!;
    await waitFor('lease expiry', async () => (await acquireLeadership(autocommit(ds), name, 'b', 60_000)) !== null, { timeoutMs: 5_000, intervalMs: 20 });
    expect(await losses.lose(job.id, 1, nodeIds[0], 'NODE_LOST', old)).toBe('deposed');
    expect((await findJob(autocommit(ds), job.id))!.state).toBe('RUNNING');
  });
});

describe('AttemptLossApplier.evict', () => {
  const nodeEvents = (nodeId: string) => ds.query(`SELECT type, reason, job_ids, epoch::int AS epoch FROM node_events WHERE node_id = $1`, [nodeId]);
  const lead = async () => (await acquireLeadership(autocommit(ds), uniqueTag('lease'), 'a', 60_000))!;

  it('ends every live attempt on the node and records one EVICTED event naming them, fenced by the epoch', async () => {
    const a = await placed({ maxRetries: 1 });
    const node = a.nodeIds[0];
    const { job: other } = await placed({ maxRetries: 0, onNodes: [node] });
    const leadership = await lead();
    const out = await losses.evict(node, [{ jobId: a.job.id, attempt: 1 }, { jobId: other.id, attempt: 1 }, { jobId: a.job.id, attempt: 1 }], 'NODE_LOST', leadership, new Date());
    expect(out).toEqual({ deposed: false, jobIds: expect.arrayContaining([a.job.id, other.id]) });
    expect(out.deposed === false && out.jobIds).toHaveLength(2); // the repeated rank changed nothing the second time
    expect((await findJob(autocommit(ds), a.job.id))!.state).toBe('QUEUED');
    expect((await findJob(autocommit(ds), other.id))!.state).toBe('FAILED');
    expect((await loadNodes(autocommit(ds), [node]))[0].gpusAllocated).toBe(0);
    const events = await nodeEvents(node);
    expect(events).toEqual([{ type: 'EVICTED', reason: 'NODE_LOST', job_ids: expect.arrayContaining([a.job.id, other.id]), epoch: leadership.epoch }]);
  });

  it('a deposed leader neither ends attempts nor records the eviction', async () => {
    const { job, nodeIds } = await placed({ maxRetries: 1 });
    const name = uniqueTag('lease');
    const old = (await acquireLeadership(autocommit(ds), name, 'a', 50))!;
    await waitFor('lease expiry', async () => (await acquireLeadership(autocommit(ds), name, 'b', 60_000)) !== null, { timeoutMs: 5_000, intervalMs: 20 });
    expect(await losses.evict(nodeIds[0], [{ jobId: job.id, attempt: 1 }], 'NODE_LOST', old, new Date())).toEqual({ deposed: true });
    expect((await findJob(autocommit(ds), job.id))!.state).toBe('RUNNING');
    expect(await nodeEvents(nodeIds[0])).toEqual([]);
  });

  it('when the eviction cannot be recorded, no attempt is ended either (a successor evicts it whole)', async () => {
    const { job, nodeIds } = await placed({ maxRetries: 1 });
    // Postgres itself refuses this node's event, as a crash between the two writes would leave it unwritten.
    const fn = `refuse_${uniqueTag('ev').replace(/\W/g, '_')}`;
    await ds.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
    await ds.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON node_events FOR EACH ROW WHEN (NEW.node_id = '${nodeIds[0]}') EXECUTE FUNCTION ${fn}()`);
    try {
      await expect(losses.evict(nodeIds[0], [{ jobId: job.id, attempt: 1 }], 'NODE_LOST', await lead(), new Date())).rejects.toThrow('refused');
    } finally {
      await ds.query(`DROP TRIGGER ${fn} ON node_events`);
      await ds.query(`DROP FUNCTION ${fn}()`);
    }
    expect(await findJob(autocommit(ds), job.id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
    expect((await loadNodes(autocommit(ds), nodeIds))[0].gpusAllocated).toBe(2);
    const out = await losses.evict(nodeIds[0], [{ jobId: job.id, attempt: 1 }], 'NODE_LOST', await lead(), new Date());
    expect(out).toEqual({ deposed: false, jobIds: [job.id] });
  });
});

describe('leader leases', () => {
  it('one holder at a time; a takeover after expiry bumps the epoch and fences the old holder', async () => {
    const name = uniqueTag('lease');
    const a = (await acquireLeadership(autocommit(ds), name, 'a', 60_000))!;
    expect(await acquireLeadership(autocommit(ds), name, 'b', 60_000)).toBeNull();
    expect((await acquireLeadership(autocommit(ds), name, 'a', 60_000))!.epoch).toBe(a.epoch); // renewal
    await ds.query(`UPDATE leader_leases SET expires_at = now() - interval '1 second' WHERE name = $1`, [name]);
    const b = (await acquireLeadership(autocommit(ds), name, 'b', 60_000))!;
    expect(b.epoch).toBe(a.epoch + 1);
    expect(await inTransaction(ds, (sql) => holdsLeadership(sql, a))).toBe(false);
    expect(await inTransaction(ds, (sql) => holdsLeadership(sql, b))).toBe(true);
  });
});

describe('FailureDetector', () => {
  // Each case starts with no live work anywhere, so only its own nodes can be judged.
  beforeEach(async () => ds.query(`UPDATE attempt_nodes SET released_at = now() WHERE released_at IS NULL`));
  const config = () =>
    Object.assign(new ReconcilerEnv(), {
      GANTRY_NODE_SUSPECT_MS: 1000, GANTRY_NODE_DEAD_MS: 4000, GANTRY_INGEST_STALL_MS: 2000, GANTRY_INSTANCE_ID: uniqueTag('r'),
      GANTRY_LEADER_LEASE_MS: 60_000, GANTRY_EVICTIONS_PER_SECOND: 100, GANTRY_EVICTION_BURST: 100, GANTRY_PARTITION_MIN_RACK: 4, GANTRY_PARTITION_SHARE: 0.5,
    });
  const live = () => new NodeLiveStore(redis, 600_000);
  const beat = (nodeId: string, at: number) => live().recordBeats([{ nodeId, bootId: 'b', seq: at, sentAt: at, receivedAt: at, running: '[]' }]);

  async function leadingDetector(now: number) {
    const c = config();
    await ds.query(`DELETE FROM leader_leases WHERE name = 'failure-detector'`);
    const election = new LeaderElection(ds, c, silentLogger() as never);
    await election.tick();
    const detector = new FailureDetector(ds, redis, c, silentLogger() as never, election, losses);
    await redis.set('gantry:detector:info-since', String(now - 60_000));
    // The first round only starts the new leader's grace period.
    expect((await detector.round(now - 1_500)).judged).toBe(false);
    return detector;
  }

  it('ends the attempts of a node silent past the dead timeout, and spares a live one', async () => {
    const now = Date.now();
    const deadOne = await placed({ maxRetries: 1 });
    const liveOne = await placed({ maxRetries: 1 });
    await beat(deadOne.nodeIds[0], now - 10_000);
    await beat(liveOne.nodeIds[0], now - 100);
    const round = await (await leadingDetector(now)).round(now);
    expect(round.judged).toBe(true);
    expect(round.evicted).toEqual([deadOne.nodeIds[0]]);
    expect((await findJob(autocommit(ds), deadOne.job.id))!.state).toBe('QUEUED');
    expect((await findJob(autocommit(ds), liveOne.job.id))!.state).toBe('RUNNING');
    await losses.lose(liveOne.job.id, 1, liveOne.nodeIds[0], 'NODE_LOST'); // leave nothing live behind
  });

  it('judges nobody while ingestion is stalled (its own silence is not node death)', async () => {
    const now = Date.now();
    await redis.flushdb();
    const victim = await placed({ maxRetries: 1 });
    await beat(victim.nodeIds[0], now - 30_000); // the newest beat anywhere is 30 s old
    const round = await (await leadingDetector(now)).round(now);
    expect(round.judged).toBe(false);
    expect((await findJob(autocommit(ds), victim.job.id))!.state).toBe('RUNNING');
    await losses.lose(victim.job.id, 1, victim.nodeIds[0], 'NODE_LOST');
  });

  it('holds a rack that went silent as a whole instead of evicting it', async () => {
    const now = Date.now();
    const rack = uniqueTag('rack');
    const jobs = [];
    for (let i = 0; i < 4; i++) jobs.push(await placed({ rack, maxRetries: 1 }));
    for (const j of jobs) await beat(j.nodeIds[0], now - 10_000);
    const witness = await makeNode().insert(ds);
    await beat(witness.id, now - 50); // ingestion is live
    const round = await (await leadingDetector(now)).round(now);
    expect(round.heldForPartition.sort()).toEqual(jobs.map((j) => j.nodeIds[0]).sort());
    for (const j of jobs) expect((await findJob(autocommit(ds), j.job.id))!.state).toBe('RUNNING');
    for (const j of jobs) await losses.lose(j.job.id, 1, j.nodeIds[0], 'NODE_LOST');
  });

  it('after a Redis restart, counts silence only from when Redis came back', async () => {
    const now = Date.now();
    await redis.flushdb();
    const victim = await placed({ maxRetries: 1 });
    const c = config();
    await ds.query(`DELETE FROM leader_leases WHERE name = 'failure-detector'`);
    const election = new LeaderElection(ds, c, silentLogger() as never);
    await election.tick();
    const detector = new FailureDetector(ds, redis, c, silentLogger() as never, election, losses);
    await detector.round(now - 2_000); // leader grace starts
    const witness = await makeNode().insert(ds);
    await beat(witness.id, now - 10); // ingestion live; the victim was never heard since the flush
    const round = await detector.round(now);
    expect(round.judged).toBe(true);
    expect(round.evicted).toEqual([]); // info began `now`: the victim's silence is 0, not "forever"
    await losses.lose(victim.job.id, 1, victim.nodeIds[0], 'NODE_LOST');
  });
});
