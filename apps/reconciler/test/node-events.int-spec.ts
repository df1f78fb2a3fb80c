import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { JobRecord, NodeLiveStore, autocommit, findJob, listJobEvents, listNodeEvents } from '@gantry/persistence';
import { makeJob, makeNode, openDataSource, placeJob, silentLogger, testSuite, testWakeUpSender, uniqueTag } from '@gantry/testing';
import { AttemptLossApplier } from '../src/attempt-loss-applier';
import { ReconcilerEnv } from '../src/config';
import { FailureDetector } from '../src/failure-detector';
import { LeaderElection } from '../src/leader-election';

/**
 * Node events and the partition hold window, on the detector with an injected clock: each round is
 * given `now`, and beats are written with matching receive times, so silence is exact.
 */
let ds: DataSource;
let redis: Redis;
let losses: AttemptLossApplier;

let wake: Awaited<ReturnType<typeof testWakeUpSender>>;
beforeAll(async () => {
  ds = await openDataSource();
  redis = new Redis(testSuite('reconciler-node-events').redisUrl);
  await redis.flushdb();
  wake = await testWakeUpSender('attempt-loss-test');
  losses = new AttemptLossApplier(ds, wake.sender);
});
afterAll(async () => {
  // The detectors here took the real lease name with long leases: hand it back, or the next suite's
  // reconciler would wait out the lease before it could lead.
  await ds.query(`DELETE FROM leader_leases WHERE name = 'failure-detector' AND holder LIKE 'r-%'`);
  redis.disconnect();
  await wake.close();
  await ds.destroy();
});
// Each case starts with no live work anywhere, so only its own nodes can be evicted.
beforeEach(async () => ds.query(`UPDATE attempt_nodes SET released_at = now() WHERE released_at IS NULL`));

const config = (over: Partial<ReconcilerEnv> = {}) =>
  Object.assign(new ReconcilerEnv(), {
    GANTRY_NODE_SUSPECT_MS: 1000, GANTRY_NODE_DEAD_MS: 4000, GANTRY_INGEST_STALL_MS: 2000, GANTRY_INSTANCE_ID: uniqueTag('r'),
    GANTRY_LEADER_LEASE_MS: 60_000, GANTRY_EVICTIONS_PER_SECOND: 100, GANTRY_EVICTION_BURST: 100, GANTRY_PARTITION_MIN_RACK: 4,
    GANTRY_PARTITION_SHARE: 0.5, GANTRY_PARTITION_HOLD_MS: 0, ...over,
  });
const beat = (nodeId: string, at: number) => new NodeLiveStore(redis, 600_000).recordBeats([{ nodeId, bootId: 'b', seq: at, sentAt: at, receivedAt: at, running: '[]' }]);

/** A detector that leads and is past its grace at `now`. */
async function leadingDetector(now: number, over: Partial<ReconcilerEnv> = {}): Promise<FailureDetector> {
  const c = config(over);
  await ds.query(`DELETE FROM leader_leases WHERE name = 'failure-detector'`);
  const election = new LeaderElection(ds, c, silentLogger() as never);
  await election.tick();
  const detector = new FailureDetector(ds, redis, c, silentLogger() as never, election, losses);
  await redis.set('gantry:detector:info-since', String(now - 60_000));
  expect((await detector.round(now - 1_500)).judged).toBe(false); // starts the grace period
  return detector;
}

async function placedOn(nodeId: string): Promise<JobRecord> {
  return placeJob(ds, await makeJob().gpus(1).maxRetries(2).insert(ds), [nodeId], { running: true });
}

const eventsOf = async (nodeId: string) =>
  (await listNodeEvents(autocommit(ds), nodeId, 0, 100)).map((e) => `${e.type}:${e.fromHealth ?? ''}>${e.toHealth ?? ''}:${e.reason ?? ''}`);

it('records each health change once (HEALTHY > DEGRADED > UNHEALTHY > HEALTHY), nothing for steady beats, and a new leader continues', async () => {
  const t0 = Date.now();
  const node = (await makeNode().rack(uniqueTag('rack')).insert(ds)).id;
  const steady = (await makeNode().rack(uniqueTag('rack')).insert(ds)).id;
  const detector = await leadingDetector(t0);
  const at = async (t: number, alsoNode: boolean) => {
    await beat(steady, t);
    if (alsoNode) await beat(node, t);
    return detector.round(t);
  };
  const mine = (r: { transitions: Array<{ nodeId: string; reason: string }> }) => r.transitions.filter((x) => x.nodeId === node || x.nodeId === steady).map((x) => x.reason);
  expect(mine(await at(t0, true))).toEqual([]);
  expect(mine(await at(t0 + 500, false))).toEqual([]);
  expect(mine(await at(t0 + 1_000, false))).toEqual(['SILENT_PAST_SUSPECT']);
  expect(mine(await at(t0 + 2_000, false))).toEqual([]); // still DEGRADED: nothing written
  expect(mine(await at(t0 + 4_000, false))).toEqual(['SILENT_PAST_DEAD']);
  expect(mine(await at(t0 + 5_000, true))).toEqual(['HEARD']);
  expect(mine(await at(t0 + 5_500, true))).toEqual([]);
  expect(await eventsOf(node)).toEqual([
    'HEALTH_CHANGED:HEALTHY>DEGRADED:SILENT_PAST_SUSPECT', 'HEALTH_CHANGED:DEGRADED>UNHEALTHY:SILENT_PAST_DEAD', 'HEALTH_CHANGED:UNHEALTHY>HEALTHY:HEARD',
  ]);
  expect(await eventsOf(steady)).toEqual([]);

  // The node goes silent again; a new leader takes over: it continues from the recorded health.
  await beat(steady, t0 + 6_500);
  expect(mine(await detector.round(t0 + 6_500))).toEqual(['SILENT_PAST_SUSPECT']);
  const next = await leadingDetector(t0 + 7_000);
  await beat(steady, t0 + 7_000);
  expect(mine(await next.round(t0 + 7_000))).toEqual([]); // already DEGRADED: not written twice
  expect(await eventsOf(node)).toHaveLength(4);
});

it('holds a silent rack for GANTRY_PARTITION_HOLD_MS, then evicts what is still silent at the token-bucket rate; a node that returns keeps its work', async () => {
  const t0 = Date.now();
  const rack = uniqueTag('rack');
  const nodes = [];
  for (let i = 0; i < 5; i++) nodes.push((await makeNode().rack(rack).insert(ds)).id);
  const jobs = [];
  for (const n of nodes) jobs.push(await placedOn(n));
  const witness = (await makeNode().rack(uniqueTag('rack')).insert(ds)).id;
  for (const n of nodes) await beat(n, t0 - 10_000); // the whole rack went silent 10 s ago
  const detector = await leadingDetector(t0, { GANTRY_PARTITION_HOLD_MS: 5_000, GANTRY_EVICTIONS_PER_SECOND: 1, GANTRY_EVICTION_BURST: 2 });
  const at = async (t: number) => {
    await beat(witness, t);
    return detector.round(t);
  };

  const first = await at(t0);
  expect(first.heldForPartition.sort()).toEqual([...nodes].sort());
  expect(first.evicted).toEqual([]);
  for (const j of jobs) expect((await listJobEvents(autocommit(ds), j.id, 0, 50)).pop()).toMatchObject({ type: 'RECONCILED', reason: 'NODE_PARTITION_HELD', attempt: 1 });

  // The first node comes back inside the window: it keeps its work, and its job says so.
  await beat(nodes[0], t0 + 1_000);
  expect((await at(t0 + 1_000)).evicted).toEqual([]);
  expect(await findJob(autocommit(ds), jobs[0].id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
  expect((await listJobEvents(autocommit(ds), jobs[0].id, 0, 50)).pop()).toMatchObject({ type: 'RECONCILED', reason: 'NODE_RETURNED' });

  // Still inside the window (4 of 5 silent: still a partition): nothing is evicted.
  await beat(nodes[0], t0 + 4_999);
  expect((await at(t0 + 4_999)).evicted).toEqual([]);
  // The window runs out: the burst (2) goes at once, then 1 per second.
  await beat(nodes[0], t0 + 5_000);
  const expiry = await at(t0 + 5_000);
  expect(expiry.evicted).toHaveLength(2);
  expect(expiry.deferred).toHaveLength(2);
  await beat(nodes[0], t0 + 6_000);
  expect((await at(t0 + 6_000)).evicted).toHaveLength(1);
  await beat(nodes[0], t0 + 7_000);
  expect((await at(t0 + 7_000)).evicted).toHaveLength(1);

  expect(await findJob(autocommit(ds), jobs[0].id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
  for (const j of jobs.slice(1)) {
    expect(await findJob(autocommit(ds), j.id)).toMatchObject({ state: 'QUEUED', attempt: 1 });
    expect((await listJobEvents(autocommit(ds), j.id, 0, 50)).pop()).toMatchObject({ type: 'STATE_CHANGED', toState: 'QUEUED', reason: 'NODE_LOST' });
  }
  expect(await eventsOf(nodes[0])).toEqual(['HEALTH_CHANGED:HEALTHY>UNHEALTHY:PARTITION_HELD', 'HEALTH_CHANGED:UNHEALTHY>HEALTHY:HEARD']);
  expect(await eventsOf(nodes[1])).toEqual([
    'HEALTH_CHANGED:HEALTHY>UNHEALTHY:PARTITION_HELD', 'HEALTH_CHANGED:UNHEALTHY>UNHEALTHY:PARTITION_HOLD_EXPIRED', 'EVICTED:>UNHEALTHY:PARTITION_HOLD_EXPIRED',
  ]);
  const evicted = (await listNodeEvents(autocommit(ds), nodes[1], 0, 100)).pop()!;
  expect(evicted.jobIds).toEqual([jobs[1].id]);
  await losses.lose(jobs[0].id, 1, nodes[0], 'NODE_LOST'); // leave nothing live behind
});
