import { DataSource } from 'typeorm';
import {
  ConcurrentUpdateError, JobRecord, PlacementWrite, appendJobEvents, autocommit, casAllocate, casUpdateJob, commitPlacements, findJob,
  inTransaction, insertAttemptRanks, listJobEvents, loadNodes, loadRanks, releaseRank, upsertNodeTopology,
} from '@gantry/persistence';
import { makeJob, makeNode, openDataSource } from '@gantry/testing';

let ds: DataSource;
beforeAll(async () => (ds = await openDataSource()));
afterAll(async () => ds.destroy());

const alloc = (nodeId: string, expectedVersion: number, gpus: number) => ({ nodeId, expectedVersion, gpus, cpuCores: 1, memoryMiB: 1 });

describe('casAllocate (the placement guarantee)', () => {
  it('takes capacity at the expected version and bumps it', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    const [before] = await loadNodes(autocommit(ds), [node.id]);
    await inTransaction(ds, (sql) => casAllocate(sql, [alloc(node.id, before.version, 3)], new Date()));
    const [after] = await loadNodes(autocommit(ds), [node.id]);
    expect([after.gpusAllocated, after.version]).toEqual([3, before.version + 1]);
  });

  it('refuses a stale version and changes nothing', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    const [n] = await loadNodes(autocommit(ds), [node.id]);
    await inTransaction(ds, (sql) => casAllocate(sql, [alloc(node.id, n.version, 1)], new Date()));
    await expect(inTransaction(ds, (sql) => casAllocate(sql, [alloc(node.id, n.version, 1)], new Date()))).rejects.toBeInstanceOf(ConcurrentUpdateError);
    const [after] = await loadNodes(autocommit(ds), [node.id]);
    expect(after.gpusAllocated).toBe(1);
  });

  it('refuses to over-commit even at the right version', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    const [n] = await loadNodes(autocommit(ds), [node.id]);
    await expect(inTransaction(ds, (sql) => casAllocate(sql, [alloc(node.id, n.version, 9)], new Date()))).rejects.toBeInstanceOf(ConcurrentUpdateError);
  });

  it('rolls back every node of a gang when one node lost its race', async () => {
    const a = await makeNode().gpus(8).insert(ds);
    const b = await makeNode().gpus(8).insert(ds);
    const [na, nb] = await loadNodes(autocommit(ds), [a.id, b.id].sort());
    await inTransaction(ds, (sql) => casAllocate(sql, [alloc(nb.id, nb.version, 1)], new Date()));
    await expect(inTransaction(ds, (sql) => casAllocate(sql, [alloc(na.id, na.version, 4), alloc(nb.id, nb.version, 4)], new Date()))).rejects.toBeInstanceOf(ConcurrentUpdateError);
    const after = await loadNodes(autocommit(ds), [a.id, b.id]);
    expect(after.map((n) => n.gpusAllocated).sort()).toEqual([0, 1]);
  });

  it('lets exactly one of 20 racing claims for the last GPUs win', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    const [n] = await loadNodes(autocommit(ds), [node.id]);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => inTransaction(ds, (sql) => casAllocate(sql, [alloc(node.id, n.version, 8)], new Date()))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const [after] = await loadNodes(autocommit(ds), [node.id]);
    expect(after.gpusAllocated).toBe(8);
  });

  it('the database itself refuses a negative allocation (a double release)', async () => {
    const node = await makeNode().gpus(2).insert(ds);
    await expect(ds.query(`UPDATE nodes SET gpus_allocated = -1 WHERE id = $1`, [node.id])).rejects.toThrow(/nodes_allocation_non_negative/);
  });

  it('records a node shrinking below what its running work holds, and places nothing more on it', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    const [n] = await loadNodes(autocommit(ds), [node.id]);
    await inTransaction(ds, (sql) => casAllocate(sql, [alloc(node.id, n.version, 8)], new Date()));
    await upsertNodeTopology(autocommit(ds), [{ ...node, gpusTotal: 6 }], new Date());
    const [shrunk] = await loadNodes(autocommit(ds), [node.id]);
    expect([shrunk.gpusTotal, shrunk.gpusAllocated]).toEqual([6, 8]);
    await expect(inTransaction(ds, (sql) => casAllocate(sql, [alloc(node.id, shrunk.version, 0)], new Date()))).rejects.toBeInstanceOf(ConcurrentUpdateError);
  });
});

describe('commitPlacements (a cycle\'s placements in one transaction)', () => {
  const write = (job: JobRecord, nodeIds: string[], gpus: number): PlacementWrite => ({
    jobId: job.id, expectedVersion: job.version, attempt: 1, nodeIds, perRank: { gpus, cpuCores: 1, memoryMiB: 1 },
    commands: nodeIds.map((n) => ({ topic: 'test.placements', key: n, value: { jobId: job.id, nodeId: n } })),
  });

  it('places several jobs, two sharing a node and one a gang, with capacity summed per node', async () => {
    const [a, b] = [await makeNode().gpus(8).insert(ds), await makeNode().gpus(8).insert(ds)];
    const [j1, j2, gang] = [await makeJob().gpus(2).insert(ds), await makeJob().gpus(3).insert(ds), await makeJob().gpus(1).gang(2).insert(ds)];
    const nodes = await loadNodes(autocommit(ds), [a.id, b.id]);
    const versions = new Map(nodes.map((n) => [n.id, n.version]));
    await inTransaction(ds, (sql) => commitPlacements(sql, [write(j1, [a.id], 2), write(j2, [a.id], 3), write(gang, [a.id, b.id], 1)], versions, new Date()));

    const after = new Map((await loadNodes(autocommit(ds), [a.id, b.id])).map((n) => [n.id, n]));
    expect([after.get(a.id)!.gpusAllocated, after.get(b.id)!.gpusAllocated]).toEqual([6, 1]);
    expect(after.get(a.id)!.version).toBe(versions.get(a.id)! + 1);
    for (const [job, nodeIds] of [[j1, [a.id]], [j2, [a.id]], [gang, [a.id, b.id]]] as const) {
      expect(await findJob(autocommit(ds), job.id)).toMatchObject({ state: 'SCHEDULED', attempt: 1, nodeIds, lastEventSeq: 2 });
      expect((await loadRanks(autocommit(ds), job.id, 1)).map((r) => r.nodeId)).toEqual(nodeIds);
      expect((await listJobEvents(autocommit(ds), job.id, 1, 10)).map((e) => [e.seq, e.toState])).toEqual([[2, 'SCHEDULED']]);
    }
    const [outbox] = await ds.query(`DELETE FROM outbox WHERE topic = 'test.placements' AND value::jsonb->>'jobId' = ANY($1::text[]) RETURNING key`, [[j1.id, j2.id, gang.id]]);
    expect(outbox).toHaveLength(4);
  });

  it.each([
    ['a node changed since the plan', 'node'],
    ['a job changed since the plan', 'job'],
    ['the jobs together exceed a node', 'capacity'],
  ])('writes nothing when %s', async (_, what) => {
    const node = await makeNode().gpus(8).insert(ds);
    const [j1, j2] = [await makeJob().gpus(4).insert(ds), await makeJob().gpus(what === 'capacity' ? 5 : 4).insert(ds)];
    const [n] = await loadNodes(autocommit(ds), [node.id]);
    if (what === 'node') await inTransaction(ds, (sql) => casAllocate(sql, [alloc(node.id, n.version, 0)], new Date()));
    if (what === 'job') await inTransaction(ds, (sql) => casUpdateJob(sql, j2.id, j2.version, {}, 0, new Date()));
    const versions = new Map([[node.id, n.version]]);

    await expect(
      inTransaction(ds, (sql) => commitPlacements(sql, [write(j1, [node.id], 4), write(j2, [node.id], j2.gpus)], versions, new Date())),
    ).rejects.toBeInstanceOf(ConcurrentUpdateError);
    const [after] = await loadNodes(autocommit(ds), [node.id]);
    expect(after.gpusAllocated).toBe(0);
    for (const j of [j1, j2]) {
      expect((await findJob(autocommit(ds), j.id))!.state).toBe('QUEUED');
      expect(await loadRanks(autocommit(ds), j.id, 1)).toEqual([]);
    }
  });
});

describe('releaseRank', () => {
  it('gives capacity back exactly once', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    const job = await makeJob().gpus(4).insert(ds);
    const [n] = await loadNodes(autocommit(ds), [node.id]);
    await inTransaction(ds, async (sql) => {
      await casAllocate(sql, [{ nodeId: node.id, expectedVersion: n.version, gpus: 4, cpuCores: 1, memoryMiB: 1024 }], new Date());
      await insertAttemptRanks(sql, job.id, 1, [{ rank: 0, nodeId: node.id, gpus: 4, cpuCores: 1, memoryMiB: 1024 }], new Date());
      await casUpdateJob(sql, job.id, job.version, { state: 'SCHEDULED', attempt: 1, nodeIds: [node.id] }, 0, new Date());
    });
    const first = await Promise.all(Array.from({ length: 5 }, () => inTransaction(ds, (sql) => releaseRank(sql, job.id, 1, node.id, new Date()))));
    expect(first.filter(Boolean)).toHaveLength(1);
    const [after] = await loadNodes(autocommit(ds), [node.id]);
    expect([after.gpusAllocated, after.cpuAllocated, after.memoryAllocated]).toEqual([0, 0, 0]);
  });
});

describe('job compare-and-set and events', () => {
  it('gives gapless event seqs to racing writers; losers change nothing', async () => {
    const job = await makeJob().insert(ds);
    // 10 writers race; each retries on a lost compare-and-set, as every write path does.
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        for (;;) {
          try {
            await inTransaction(ds, async (sql) => {
              const cur = (await findJob(sql, job.id))!;
              const { firstSeq } = await casUpdateJob(sql, job.id, cur.version, {}, 1, new Date());
              await appendJobEvents(sql, job.id, firstSeq, [{ type: 'RECONCILED', at: new Date(), reason: `writer-${i}` }]);
            });
            return;
          } catch (e) {
            if (!(e instanceof ConcurrentUpdateError)) throw e;
          }
        }
      }),
    );
    const events = await listJobEvents(autocommit(ds), job.id, 0, 100);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect(new Set(events.slice(1).map((e) => e.reason)).size).toBe(10);
    expect((await findJob(autocommit(ds), job.id))!.lastEventSeq).toBe(11);
  });

  it('a stale version is refused', async () => {
    const job = await makeJob().insert(ds);
    await inTransaction(ds, (sql) => casUpdateJob(sql, job.id, job.version, { state: 'SCHEDULED' }, 1, new Date()));
    await expect(inTransaction(ds, (sql) => casUpdateJob(sql, job.id, job.version, { state: 'CANCELLED' }, 1, new Date()))).rejects.toBeInstanceOf(ConcurrentUpdateError);
    expect((await findJob(autocommit(ds), job.id))!.state).toBe('SCHEDULED');
  });
});
