import { DataSource } from 'typeorm';
import { OUTBOX_DISPATCH } from '@gantry/contracts';
import type { OutboxRow } from '@gantry/messaging';
import { autocommit, findJob, insertQueue, loadNodes, releaseRank } from '@gantry/persistence';
import { runDispatchExpander } from '@gantry/runtime';
import { makeJob, makeNode, uniqueTag } from '@gantry/testing';
import { useSchedulerFixture } from './scheduler-fixture';

const fixture = useSchedulerFixture();
let ds: DataSource;
beforeAll(() => {
  ds = fixture.ds;
});
const cycle = () => fixture.cycle({ GANTRY_SCHEDULER_BATCH: 1000 });
const heard = (nodeId: string, at?: number) => fixture.heard([nodeId], at);

/** The RUNs the placement's outbox rows stand for, as the relay builds them from the dispatch row written in the same commit. */
async function outboxCommands(jobId: string) {
  const rows = (await ds.query(`SELECT id::text, topic, key, value, headers FROM outbox WHERE topic = $2 AND value::jsonb->>'jobId' = $1`, [
    jobId,
    OUTBOX_DISPATCH,
  ])) as OutboxRow[];
  const expand = await runDispatchExpander.prepare(autocommit(ds), rows);
  return rows.flatMap((r) => [...expand(r)]).map((m) => JSON.parse(String(m.message.value)));
}

describe('SchedulingCycle', () => {
  it('places a queued job on a healthy node with free capacity, with RUN in the same commit', async () => {
    const model = uniqueTag('GPU');
    const node = await makeNode().gpus(8, model).insert(ds);
    await heard(node.id);
    const job = await makeJob().gpus(4).model(model).insert(ds);
    await cycle().run();
    const placed = (await findJob(autocommit(ds), job.id))!;
    expect(placed).toMatchObject({ state: 'SCHEDULED', attempt: 1, nodeIds: [node.id], pendingReason: null });
    expect((await loadNodes(autocommit(ds), [node.id]))[0].gpusAllocated).toBe(4);
    expect(await outboxCommands(job.id)).toEqual([
      expect.objectContaining({
        type: 'RUN',
        nodeId: node.id,
        attempt: 1,
        gpuIndices: [0, 1, 2, 3],
        gang: expect.objectContaining({ size: 1, rank: 0, nodeIds: [node.id] }),
      }),
    ]);
  });

  it("carries a gang's rendezvous and a job's deadline in every rank's RUN", async () => {
    const model = uniqueTag('GPU');
    const a = await makeNode().gpus(8, model).rack(model).address('10.0.0.1').insert(ds);
    const b = await makeNode().gpus(8, model).rack(model).address('10.0.0.2').insert(ds);
    await Promise.all([heard(a.id), heard(b.id)]);
    const job = await makeJob().gpus(2).model(model).gang(2).maxRuntime(120).insert(ds);
    await cycle().run();
    const placed = (await findJob(autocommit(ds), job.id))!;
    expect(placed).toMatchObject({ state: 'SCHEDULED', maxRuntimeSeconds: 120 });
    const rank0 = placed.nodeIds[0];
    const runs = await outboxCommands(job.id);
    expect(runs.map((r) => [r.gang.rank, r.gang.masterAddr, r.gang.masterPort, r.maxRuntimeSeconds, r.gpuIndices])).toEqual([
      [0, rank0 === a.id ? '10.0.0.1' : '10.0.0.2', 29500, 120, [0, 1]],
      [1, rank0 === a.id ? '10.0.0.1' : '10.0.0.2', 29500, 120, [0, 1]],
    ]);
  });

  it('gives two 4-GPU jobs on one 8-GPU node disjoint devices, and an unhealthy device to nobody', async () => {
    const model = uniqueTag('GPU');
    // Device 2 reported unhealthy: seven usable.
    const node = await makeNode().devices([0, 1, 3, 4, 5, 6, 7], model).insert(ds);
    await heard(node.id);
    const [a, b] = [await makeJob().gpus(4).model(model).insert(ds), await makeJob().gpus(3).model(model).insert(ds)];
    await cycle().run();
    const placed = [(await findJob(autocommit(ds), a.id))!, (await findJob(autocommit(ds), b.id))!];
    expect(placed.map((j) => j.state)).toEqual(['SCHEDULED', 'SCHEDULED']);
    const devices = placed.map((j) => j.gpuIndices);
    expect(devices.map((d) => d.length)).toEqual([4, 3]);
    expect(new Set(devices.flat()).size).toBe(7);
    expect(devices.flat()).not.toContain(2);
    expect((await loadNodes(autocommit(ds), [node.id]))[0].gpusHeld.sort()).toEqual([0, 1, 3, 4, 5, 6, 7]);
    expect((await outboxCommands(a.id))[0].gpuIndices).toEqual(devices[0]);

    // The first job's end frees its devices, and only those: the next job gets them.
    await releaseRank(autocommit(ds), a.id, 1, node.id, new Date(), 'SUCCEEDED');
    const c = await makeJob().gpus(4).model(model).insert(ds);
    await cycle().run();
    expect((await findJob(autocommit(ds), c.id))!.gpuIndices.sort()).toEqual([...devices[0]].sort());
  });

  it('does not place on a node that has been silent past the suspect timeout', async () => {
    const model = uniqueTag('GPU');
    const node = await makeNode().gpus(8, model).insert(ds);
    await heard(node.id, Date.now() - 20_000);
    const job = await makeJob().gpus(1).model(model).insert(ds);
    await cycle().run();
    expect(await findJob(autocommit(ds), job.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'INSUFFICIENT_CAPACITY:gpus' });
  });

  it('says at once when no node could ever fit', async () => {
    const job = await makeJob().gpus(8).model(uniqueTag('NOSUCH')).insert(ds);
    await cycle().run();
    expect(await findJob(autocommit(ds), job.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'NO_MATCHING_NODES' });
  });

  it('places a gang on all its nodes in one commit, one RUN per rank', async () => {
    const model = uniqueTag('GPU');
    const nodes = [await makeNode().gpus(8, model).rack('gang-r').insert(ds), await makeNode().gpus(8, model).rack('gang-r').insert(ds)];
    for (const n of nodes) await heard(n.id);
    const job = await makeJob().gpus(8).model(model).gang(2).insert(ds);
    await cycle().run();
    const placed = (await findJob(autocommit(ds), job.id))!;
    expect(placed.state).toBe('SCHEDULED');
    expect([...placed.nodeIds].sort()).toEqual(nodes.map((n) => n.id).sort());
    const runs = await outboxCommands(job.id);
    expect(runs.map((r) => r.gang.rank).sort()).toEqual([0, 1]);
  });

  it('two schedulers racing over one node never over-commit it', async () => {
    const model = uniqueTag('GPU');
    const node = await makeNode().gpus(8, model).insert(ds);
    await heard(node.id);
    const jobs = [];
    for (let i = 0; i < 6; i++) jobs.push(await makeJob().gpus(4).model(model).insert(ds));
    for (let round = 0; round < 3; round++) await Promise.all([cycle().run(), cycle().run(), cycle().run()]);
    const states = await Promise.all(jobs.map(async (j) => (await findJob(autocommit(ds), j.id))!.state));
    expect(states.filter((s) => s === 'SCHEDULED')).toHaveLength(2);
    expect((await loadNodes(autocommit(ds), [node.id]))[0].gpusAllocated).toBe(8);
  });

  it('serves a higher priority band first, even when its job is younger', async () => {
    const model = uniqueTag('GPU');
    const node = await makeNode().gpus(8, model).insert(ds);
    await heard(node.id);
    const low = uniqueTag('low');
    const high = uniqueTag('high');
    await insertQueue(autocommit(ds), { name: low, priority: 1, quotaGpus: null }, new Date());
    await insertQueue(autocommit(ds), { name: high, priority: 90, quotaGpus: null }, new Date());
    const older = await makeJob().gpus(8).model(model).queue(low).insert(ds);
    const younger = await makeJob().gpus(8).model(model).queue(high).insert(ds);
    await cycle().run();
    expect((await findJob(autocommit(ds), younger.id))!.state).toBe('SCHEDULED');
    expect((await findJob(autocommit(ds), older.id))!.state).toBe('QUEUED');
  });

  it('holds a job that would take its queue past its GPU quota, with QUOTA_EXCEEDED', async () => {
    const model = uniqueTag('GPU');
    const node = await makeNode().gpus(8, model).insert(ds);
    await heard(node.id);
    const q = uniqueTag('capped');
    await insertQueue(autocommit(ds), { name: q, priority: 5, quotaGpus: 4 }, new Date());
    const first = await makeJob().gpus(4).model(model).queue(q).insert(ds);
    const second = await makeJob().gpus(4).model(model).queue(q).insert(ds);
    await cycle().run();
    expect((await findJob(autocommit(ds), first.id))!.state).toBe('SCHEDULED');
    expect(await findJob(autocommit(ds), second.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'QUOTA_EXCEEDED' });
  });

  it('gives a queue of weight 3 three times the placements of a weight-1 queue in the same band', async () => {
    const model = uniqueTag('GPU');
    const node = await makeNode().gpus(8, model).insert(ds);
    await heard(node.id);
    const heavy = uniqueTag('heavy');
    const light = uniqueTag('light');
    await insertQueue(autocommit(ds), { name: heavy, priority: 20, quotaGpus: null, weight: 3 }, new Date());
    await insertQueue(autocommit(ds), { name: light, priority: 20, quotaGpus: null }, new Date());
    const jobs = [];
    for (let i = 0; i < 8; i++) {
      jobs.push(await makeJob().gpus(1).model(model).queue(heavy).insert(ds));
      jobs.push(await makeJob().gpus(1).model(model).queue(light).insert(ds));
    }
    await cycle().run();
    const placed = await Promise.all(jobs.map(async (j) => (await findJob(autocommit(ds), j.id))!));
    const count = (q: string) => placed.filter((j) => j.queue === q && j.state === 'SCHEDULED').length;
    // Eight GPUs shared by weighted dominant share: 6 for weight 3, 2 for weight 1.
    expect([count(heavy), count(light)]).toEqual([6, 2]);
  });

  it('reserves the node a blocked higher-band job waits for; a lower-band job that fits is held with PRIORITY until it has gone', async () => {
    const model = uniqueTag('GPU');
    const node = await makeNode().gpus(8, model).insert(ds);
    await heard(node.id);
    const high = uniqueTag('high');
    const low = uniqueTag('low');
    await insertQueue(autocommit(ds), { name: high, priority: 70, quotaGpus: null }, new Date());
    await insertQueue(autocommit(ds), { name: low, priority: 30, quotaGpus: null }, new Date());
    const filler = await makeJob().gpus(4).model(model).queue(low).insert(ds);
    await cycle().run();
    expect((await findJob(autocommit(ds), filler.id))!.state).toBe('SCHEDULED');

    const small = await makeJob().gpus(2).model(model).queue(low).insert(ds);
    const big = await makeJob().gpus(8).model(model).queue(high).insert(ds);
    for (let i = 0; i < 2; i++) {
      // Twice: the hold is kept, not a one-cycle accident of ordering.
      await cycle().run();
      expect(await findJob(autocommit(ds), big.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'INSUFFICIENT_CAPACITY:gpus' });
      expect(await findJob(autocommit(ds), small.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'PRIORITY' });
    }
    expect((await loadNodes(autocommit(ds), [node.id]))[0].gpusAllocated).toBe(4);

    await releaseRank(autocommit(ds), filler.id, 1, node.id, new Date(), 'SUCCEEDED');
    await cycle().run();
    expect((await findJob(autocommit(ds), big.id))!.state).toBe('SCHEDULED');
    // This cycle the freed GPUs went to the higher band; from the next, the node is simply full.
    expect(await findJob(autocommit(ds), small.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'PRIORITY' });
    await cycle().run();
    expect(await findJob(autocommit(ds), small.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'INSUFFICIENT_CAPACITY:gpus' });
  });

  it("tells a placement lost to another replica's lease from one whose node changed under it (the loop waits only after the first)", async () => {
    const model = uniqueTag('GPU');
    const node = await makeNode().gpus(8, model).insert(ds);
    await heard(node.id);
    const job = await makeJob().gpus(1).model(model).insert(ds);

    // Another replica holds the node's lease.
    await fixture.redis.set(`gantry:lease:node:${node.id}`, uniqueTag('other-replica'), 'PX', 10_000);
    expect(await cycle().run()).toMatchObject({ placed: 0, lostRaces: 1, lostLeases: 1 });
    await fixture.redis.del(`gantry:lease:node:${node.id}`);

    // Another writer holds the node's row (a release being committed): the compare-and-set counts it changed.
    const writer = ds.createQueryRunner();
    await writer.connect();
    try {
      await writer.startTransaction();
      await writer.query(`SELECT 1 FROM nodes WHERE id = $1 FOR UPDATE`, [node.id]);
      expect(await cycle().run()).toMatchObject({ placed: 0, lostRaces: 1, lostLeases: 0 });
      await writer.commitTransaction();
    } finally {
      await writer.release();
    }
    expect(await cycle().run()).toMatchObject({ placed: 1, lostRaces: 0, lostLeases: 0 });
    expect((await findJob(autocommit(ds), job.id))!.state).toBe('SCHEDULED');
  });
});
