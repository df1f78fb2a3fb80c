import { JobRecord, autocommit, findJob, listJobEvents, listNodeEvents } from '@gantry/persistence';
import { makeJob, makeNode, placeJob, uniqueTag } from '@gantry/testing';
import { ReconcilerEnv } from '../src/config';
import { detectorFixture } from './detector-fixture';

/**
 * Node events and the partition hold window, on the detector with an injected clock: each round is
 * given `now`, and beats are written with matching receive times, so silence is exact.
 */
const fx = detectorFixture('reconciler-node-events');
// Each case starts with no live work anywhere, so only its own nodes can be evicted.
beforeEach(async () => fx.ds.query(`UPDATE attempt_nodes SET released_at = now() WHERE released_at IS NULL`));

const { beat } = fx;
/** A detector that leads at `now`; partitions are not held unless a case says so. */
const leadingDetector = (now: number, over: Partial<ReconcilerEnv> = {}) => fx.leadingDetector(now, { GANTRY_PARTITION_HOLD_MS: 0, ...over });

async function placedOn(nodeId: string): Promise<JobRecord> {
  return placeJob(fx.ds, await makeJob().gpus(1).maxRetries(2).insert(fx.ds), [nodeId], { running: true });
}

const eventsOf = async (nodeId: string) =>
  (await listNodeEvents(autocommit(fx.ds), nodeId, 0, 100)).map((e) => `${e.type}:${e.fromHealth ?? ''}>${e.toHealth ?? ''}:${e.reason ?? ''}`);

it('records each health change once (HEALTHY > DEGRADED > UNHEALTHY > HEALTHY), nothing for steady beats, and a new leader continues', async () => {
  const t0 = Date.now();
  const node = (await makeNode().rack(uniqueTag('rack')).insert(fx.ds)).id;
  const steady = (await makeNode().rack(uniqueTag('rack')).insert(fx.ds)).id;
  const detector = await leadingDetector(t0);
  const at = async (t: number, alsoNode: boolean) => {
    await beat(steady, t);
    if (alsoNode) await beat(node, t);
    return detector.round(t);
  };
  const mine = (r: { transitions: Array<{ nodeId: string; reason: string }> }) =>
    r.transitions.filter((x) => x.nodeId === node || x.nodeId === steady).map((x) => x.reason);
  expect(mine(await at(t0, true))).toEqual([]);
  expect(mine(await at(t0 + 500, false))).toEqual([]);
  expect(mine(await at(t0 + 1_000, false))).toEqual(['SILENT_PAST_SUSPECT']);
  expect(mine(await at(t0 + 2_000, false))).toEqual([]); // still DEGRADED: nothing written
  expect(mine(await at(t0 + 4_000, false))).toEqual(['SILENT_PAST_DEAD']);
  expect(mine(await at(t0 + 5_000, true))).toEqual(['HEARD']);
  expect(mine(await at(t0 + 5_500, true))).toEqual([]);
  expect(await eventsOf(node)).toEqual([
    'HEALTH_CHANGED:HEALTHY>DEGRADED:SILENT_PAST_SUSPECT',
    'HEALTH_CHANGED:DEGRADED>UNHEALTHY:SILENT_PAST_DEAD',
    'HEALTH_CHANGED:UNHEALTHY>HEALTHY:HEARD',
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
  for (let i = 0; i < 5; i++) nodes.push((await makeNode().rack(rack).insert(fx.ds)).id);
  const jobs = [];
  for (const n of nodes) jobs.push(await placedOn(n));
  const witness = (await makeNode().rack(uniqueTag('rack')).insert(fx.ds)).id;
  for (const n of nodes) await beat(n, t0 - 10_000); // the whole rack went silent 10 s ago
  const detector = await leadingDetector(t0, { GANTRY_PARTITION_HOLD_MS: 5_000, GANTRY_EVICTIONS_PER_SECOND: 1, GANTRY_EVICTION_BURST: 2 });
  const at = async (t: number) => {
    await beat(witness, t);
    return detector.round(t);
  };

  const first = await at(t0);
  expect(first.heldForPartition.sort()).toEqual([...nodes].sort());
  expect(first.evicted).toEqual([]);
  for (const j of jobs)
    expect((await listJobEvents(autocommit(fx.ds), j.id, 0, 50)).pop()).toMatchObject({ type: 'RECONCILED', reason: 'NODE_PARTITION_HELD', attempt: 1 });

  // The first node comes back inside the window: it keeps its work, and its job says so.
  await beat(nodes[0], t0 + 1_000);
  expect((await at(t0 + 1_000)).evicted).toEqual([]);
  expect(await findJob(autocommit(fx.ds), jobs[0].id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
  expect((await listJobEvents(autocommit(fx.ds), jobs[0].id, 0, 50)).pop()).toMatchObject({ type: 'RECONCILED', reason: 'NODE_RETURNED' });

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

  expect(await findJob(autocommit(fx.ds), jobs[0].id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
  for (const j of jobs.slice(1)) {
    expect(await findJob(autocommit(fx.ds), j.id)).toMatchObject({ state: 'QUEUED', attempt: 1 });
    expect((await listJobEvents(autocommit(fx.ds), j.id, 0, 50)).pop()).toMatchObject({ type: 'STATE_CHANGED', toState: 'QUEUED', reason: 'NODE_LOST' });
  }
  expect(await eventsOf(nodes[0])).toEqual(['HEALTH_CHANGED:HEALTHY>UNHEALTHY:PARTITION_HELD', 'HEALTH_CHANGED:UNHEALTHY>HEALTHY:HEARD']);
  expect(await eventsOf(nodes[1])).toEqual([
    'HEALTH_CHANGED:HEALTHY>UNHEALTHY:PARTITION_HELD',
    'HEALTH_CHANGED:UNHEALTHY>UNHEALTHY:PARTITION_HOLD_EXPIRED',
    'EVICTED:>UNHEALTHY:PARTITION_HOLD_EXPIRED',
  ]);
  const evicted = (await listNodeEvents(autocommit(fx.ds), nodes[1], 0, 100)).pop()!;
  expect(evicted.jobIds).toEqual([jobs[1].id]);
  await fx.losses.lose(jobs[0].id, 1, nodes[0], 'NODE_LOST'); // leave nothing live behind
});
