import { JobRecord, acquireLeadership, autocommit, findJob, holdsLeadership, inTransaction, listJobEvents, loadNodes } from '@gantry/persistence';
import { makeJob, makeNode, placeJob, silentLogger, uniqueTag } from '@gantry/testing';
import { waitFor } from '@gantry/stack';
import { FailureDetector } from '../src/failure-detector';
import { LeaderElection } from '../src/leader-election';
import { detectorFixture } from './detector-fixture';

const fx = detectorFixture('reconciler-failure-handling');
// Work other suites left placed has no live node behind it; it must not take part here.
beforeAll(async () => fx.ds.query(`UPDATE attempt_nodes SET released_at = now() WHERE released_at IS NULL`));

async function placed(opts: { nodes?: number; maxRetries?: number; rack?: string; onNodes?: string[] } = {}): Promise<{ job: JobRecord; nodeIds: string[] }> {
  const nodeIds: string[] = [...(opts.onNodes ?? [])];
  if (!opts.onNodes)
    for (let i = 0; i < (opts.nodes ?? 1); i++)
      nodeIds.push(
        (
          await makeNode()
            .gpus(8)
            .rack(opts.rack ?? uniqueTag('rack'))
            .insert(fx.ds)
        ).id,
      );
  const job = await makeJob()
    .gpus(2)
    .gang(nodeIds.length)
    .maxRetries(opts.maxRetries ?? 0)
    .insert(fx.ds);
  return { job: await placeJob(fx.ds, job, nodeIds, { running: true }), nodeIds };
}

describe('AttemptLossApplier', () => {
  it('requeues a job whose node died while retries remain, releasing its capacity', async () => {
    const { job, nodeIds } = await placed({ maxRetries: 1 });
    expect(await fx.losses.lose(job.id, 1, nodeIds[0], 'NODE_LOST')).toBe('requeued');
    expect(await findJob(autocommit(fx.ds), job.id)).toMatchObject({ state: 'QUEUED', attempt: 1, nodeIds: [] });
    expect((await loadNodes(autocommit(fx.ds), nodeIds))[0].gpusAllocated).toBe(0);
    const last = (await listJobEvents(autocommit(fx.ds), job.id, 0, 50)).pop();
    expect(last).toMatchObject({ type: 'STATE_CHANGED', fromState: 'RUNNING', toState: 'QUEUED', reason: 'NODE_LOST' });
    expect(await fx.losses.lose(job.id, 1, nodeIds[0], 'NODE_LOST')).toBe('ignored');
  });

  it('fails the job when its retries are used up', async () => {
    const { job, nodeIds } = await placed({ maxRetries: 0 });
    expect(await fx.losses.lose(job.id, 1, nodeIds[0], 'NODE_LOST')).toBe('failed');
    expect(await findJob(autocommit(fx.ds), job.id)).toMatchObject({ state: 'FAILED', reason: 'NODE_LOST' });
  });

  it("loses a gang as a whole: KILL to the surviving ranks, every rank released, its GPUs off its queue's count", async () => {
    const { job, nodeIds } = await placed({ nodes: 2, maxRetries: 3 });
    const counted = async () => Number((await fx.ds.query(`SELECT gpus FROM queue_gpus_held WHERE queue = $1`, [job.queue]))[0].gpus);
    const before = await counted();
    await fx.losses.lose(job.id, 1, nodeIds[0], 'NODE_LOST');
    expect((await loadNodes(autocommit(fx.ds), nodeIds)).map((n) => n.gpusAllocated)).toEqual([0, 0]);
    expect(await counted()).toBe(before - 4);
    const kills = (await fx.ds.query(`SELECT value FROM outbox WHERE value::jsonb->>'jobId' = $1 AND value::jsonb->>'type' = 'KILL'`, [job.id])).map(
      (r: { value: string }) => JSON.parse(r.value),
    );
    expect(kills).toEqual([expect.objectContaining({ nodeId: nodeIds[1], attempt: 1, reason: 'NODE_LOST' })]);
  });

  it('a deposed leader changes nothing', async () => {
    const { job, nodeIds } = await placed({ maxRetries: 1 });
    const name = uniqueTag('lease');
    const old = (await acquireLeadership(autocommit(fx.ds), name, 'a', 50))!;
    await waitFor('lease expiry', async () => (await acquireLeadership(autocommit(fx.ds), name, 'b', 60_000)) !== null, { timeoutMs: 5_000, intervalMs: 20 });
    expect(await fx.losses.lose(job.id, 1, nodeIds[0], 'NODE_LOST', old)).toBe('deposed');
    expect((await findJob(autocommit(fx.ds), job.id))!.state).toBe('RUNNING');
  });
});

describe('AttemptLossApplier, START_TIMEOUT (ADR 0035)', () => {
  async function unstarted(nodes = 1): Promise<{ job: JobRecord; nodeIds: string[] }> {
    const nodeIds: string[] = [];
    for (let i = 0; i < nodes; i++) nodeIds.push((await makeNode().gpus(8).rack(uniqueTag('rack')).insert(fx.ds)).id);
    const job = await makeJob().gpus(2).gang(nodes).maxRetries(0).insert(fx.ds);
    return { job: await placeJob(fx.ds, job, nodeIds), nodeIds };
  }
  const kills = async (jobId: string) =>
    (await fx.ds.query(`SELECT value FROM outbox WHERE value::jsonb->>'jobId' = $1 AND value::jsonb->>'type' = 'KILL'`, [jobId]))
      .map((r: { value: string }) => JSON.parse(r.value).nodeId)
      .sort();

  it('requeues without using a retry, kills every rank (the silent node is alive), counts each unstarted node and has the job avoid them', async () => {
    const { job, nodeIds } = await unstarted(2);
    expect(await fx.losses.lose(job.id, 1, nodeIds[0], 'START_TIMEOUT')).toBe('requeued');
    expect(await findJob(autocommit(fx.ds), job.id)).toMatchObject({ state: 'QUEUED', retriesForgiven: 1, startFailedOn: [...nodeIds].sort() });
    expect(await kills(job.id)).toEqual([...nodeIds].sort());
    expect((await loadNodes(autocommit(fx.ds), nodeIds)).map((n) => [n.startFailures, n.gpusAllocated])).toEqual([
      [1, 0],
      [1, 0],
    ]);
    expect((await listJobEvents(autocommit(fx.ds), job.id, 0, 50)).pop()).toMatchObject({
      fromState: 'SCHEDULED',
      toState: 'QUEUED',
      reason: 'START_TIMEOUT',
      nodeIds: [nodeIds[0]],
    });
  });

  it('leaves alone a rank that started after the beat it was judged from', async () => {
    const { job, nodeIds } = await unstarted();
    await fx.ds.query(`UPDATE attempt_nodes SET state = 'RUNNING' WHERE job_id = $1`, [job.id]);
    expect(await fx.losses.lose(job.id, 1, nodeIds[0], 'START_TIMEOUT')).toBe('ignored');
    expect(await findJob(autocommit(fx.ds), job.id)).toMatchObject({ state: 'SCHEDULED', attempt: 1 });
    expect((await loadNodes(autocommit(fx.ds), nodeIds))[0].startFailures).toBe(0);
  });
});

describe('AttemptLossApplier.evict', () => {
  const nodeEvents = (nodeId: string) => fx.ds.query(`SELECT type, reason, job_ids, epoch::int AS epoch FROM node_events WHERE node_id = $1`, [nodeId]);
  const lead = async () => (await acquireLeadership(autocommit(fx.ds), uniqueTag('lease'), 'a', 60_000))!;

  it('ends every live attempt on the node and records one EVICTED event naming them, fenced by the epoch', async () => {
    const a = await placed({ maxRetries: 1 });
    const node = a.nodeIds[0];
    const { job: other } = await placed({ maxRetries: 0, onNodes: [node] });
    const leadership = await lead();
    const out = await fx.losses.evict(
      node,
      [
        { jobId: a.job.id, attempt: 1 },
        { jobId: other.id, attempt: 1 },
        { jobId: a.job.id, attempt: 1 },
      ],
      'NODE_LOST',
      leadership,
      new Date(),
    );
    expect(out).toEqual({ deposed: false, jobIds: expect.arrayContaining([a.job.id, other.id]) });
    expect(out.deposed === false && out.jobIds).toHaveLength(2); // the repeated rank changed nothing the second time
    expect((await findJob(autocommit(fx.ds), a.job.id))!.state).toBe('QUEUED');
    expect((await findJob(autocommit(fx.ds), other.id))!.state).toBe('FAILED');
    expect((await loadNodes(autocommit(fx.ds), [node]))[0].gpusAllocated).toBe(0);
    const events = await nodeEvents(node);
    expect(events).toEqual([{ type: 'EVICTED', reason: 'NODE_LOST', job_ids: expect.arrayContaining([a.job.id, other.id]), epoch: leadership.epoch }]);
  });

  it('a deposed leader neither ends attempts nor records the eviction', async () => {
    const { job, nodeIds } = await placed({ maxRetries: 1 });
    const name = uniqueTag('lease');
    const old = (await acquireLeadership(autocommit(fx.ds), name, 'a', 50))!;
    await waitFor('lease expiry', async () => (await acquireLeadership(autocommit(fx.ds), name, 'b', 60_000)) !== null, { timeoutMs: 5_000, intervalMs: 20 });
    expect(await fx.losses.evict(nodeIds[0], [{ jobId: job.id, attempt: 1 }], 'NODE_LOST', old, new Date())).toEqual({ deposed: true });
    expect((await findJob(autocommit(fx.ds), job.id))!.state).toBe('RUNNING');
    expect(await nodeEvents(nodeIds[0])).toEqual([]);
  });

  it('when the eviction cannot be recorded, no attempt is ended either (a successor evicts it whole)', async () => {
    const { job, nodeIds } = await placed({ maxRetries: 1 });
    // Postgres itself refuses this node's event, as a crash between the two writes would leave it unwritten.
    const fn = `refuse_${uniqueTag('ev').replace(/\W/g, '_')}`;
    await fx.ds.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
    await fx.ds.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON node_events FOR EACH ROW WHEN (NEW.node_id = '${nodeIds[0]}') EXECUTE FUNCTION ${fn}()`);
    try {
      await expect(fx.losses.evict(nodeIds[0], [{ jobId: job.id, attempt: 1 }], 'NODE_LOST', await lead(), new Date())).rejects.toThrow('refused');
    } finally {
      await fx.ds.query(`DROP TRIGGER ${fn} ON node_events`);
      await fx.ds.query(`DROP FUNCTION ${fn}()`);
    }
    expect(await findJob(autocommit(fx.ds), job.id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
    expect((await loadNodes(autocommit(fx.ds), nodeIds))[0].gpusAllocated).toBe(2);
    const out = await fx.losses.evict(nodeIds[0], [{ jobId: job.id, attempt: 1 }], 'NODE_LOST', await lead(), new Date());
    expect(out).toEqual({ deposed: false, jobIds: [job.id] });
  });
});

describe('leader leases', () => {
  it('one holder at a time; a takeover after expiry bumps the epoch and fences the old holder', async () => {
    const name = uniqueTag('lease');
    const a = (await acquireLeadership(autocommit(fx.ds), name, 'a', 60_000))!;
    expect(await acquireLeadership(autocommit(fx.ds), name, 'b', 60_000)).toBeNull();
    expect((await acquireLeadership(autocommit(fx.ds), name, 'a', 60_000))!.epoch).toBe(a.epoch); // renewal
    await fx.ds.query(`UPDATE leader_leases SET expires_at = now() - interval '1 second' WHERE name = $1`, [name]);
    const b = (await acquireLeadership(autocommit(fx.ds), name, 'b', 60_000))!;
    expect(b.epoch).toBe(a.epoch + 1);
    expect(await inTransaction(fx.ds, (sql) => holdsLeadership(sql, a))).toBe(false);
    expect(await inTransaction(fx.ds, (sql) => holdsLeadership(sql, b))).toBe(true);
  });
});

describe('FailureDetector', () => {
  // Each case starts with no live work anywhere, so only its own nodes can be judged.
  beforeEach(async () => fx.ds.query(`UPDATE attempt_nodes SET released_at = now() WHERE released_at IS NULL`));
  const { beat, config, leadingDetector } = fx;

  it('ends the attempts of a node silent past the dead timeout, and spares a live one', async () => {
    const now = Date.now();
    const deadOne = await placed({ maxRetries: 1 });
    const liveOne = await placed({ maxRetries: 1 });
    await beat(deadOne.nodeIds[0], now - 10_000);
    await beat(liveOne.nodeIds[0], now - 100);
    const round = await (await leadingDetector(now)).round(now);
    expect(round.judged).toBe(true);
    expect(round.evicted).toEqual([deadOne.nodeIds[0]]);
    expect((await findJob(autocommit(fx.ds), deadOne.job.id))!.state).toBe('QUEUED');
    expect((await findJob(autocommit(fx.ds), liveOne.job.id))!.state).toBe('RUNNING');
    await fx.losses.lose(liveOne.job.id, 1, liveOne.nodeIds[0], 'NODE_LOST'); // leave nothing live behind
  });

  it('judges nobody while ingestion is stalled (its own silence is not node death)', async () => {
    const now = Date.now();
    await fx.redis.flushdb();
    const victim = await placed({ maxRetries: 1 });
    await beat(victim.nodeIds[0], now - 30_000); // the newest beat anywhere is 30 s old
    const round = await (await leadingDetector(now)).round(now);
    expect(round.judged).toBe(false);
    expect((await findJob(autocommit(fx.ds), victim.job.id))!.state).toBe('RUNNING');
    await fx.losses.lose(victim.job.id, 1, victim.nodeIds[0], 'NODE_LOST');
  });

  it('holds a rack that went silent as a whole instead of evicting it', async () => {
    const now = Date.now();
    const rack = uniqueTag('rack');
    const jobs = [];
    for (let i = 0; i < 4; i++) jobs.push(await placed({ rack, maxRetries: 1 }));
    for (const j of jobs) await beat(j.nodeIds[0], now - 10_000);
    const witness = await makeNode().insert(fx.ds);
    await beat(witness.id, now - 50); // ingestion is live
    const round = await (await leadingDetector(now)).round(now);
    expect(round.heldForPartition.sort()).toEqual(jobs.map((j) => j.nodeIds[0]).sort());
    for (const j of jobs) expect((await findJob(autocommit(fx.ds), j.job.id))!.state).toBe('RUNNING');
    for (const j of jobs) await fx.losses.lose(j.job.id, 1, j.nodeIds[0], 'NODE_LOST');
  });

  it('after a Redis restart, counts silence only from when Redis came back', async () => {
    const now = Date.now();
    await fx.redis.flushdb();
    const victim = await placed({ maxRetries: 1 });
    const c = config();
    await fx.ds.query(`DELETE FROM leader_leases WHERE name = 'failure-detector'`);
    const election = new LeaderElection(fx.ds, c, silentLogger() as never);
    await election.tick();
    const detector = new FailureDetector(fx.ds, fx.redis, c, silentLogger() as never, election, fx.losses);
    await detector.round(now - 2_000); // leader grace starts
    const witness = await makeNode().insert(fx.ds);
    await beat(witness.id, now - 10); // ingestion live; the victim was never heard since the flush
    const round = await detector.round(now);
    expect(round.judged).toBe(true);
    expect(round.evicted).toEqual([]); // info began `now`: the victim's silence is 0, not "forever"
    await fx.losses.lose(victim.job.id, 1, victim.nodeIds[0], 'NODE_LOST');
  });
});
