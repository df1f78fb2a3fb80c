import { DataSource } from 'typeorm';
import { randomUUID } from 'node:crypto';
import {
  JobRecord,
  PlacementWrite,
  autocommit,
  casUpdateJob,
  commitPlacementsThatHold,
  findJob,
  inTransaction,
  insertQueue,
  loadNodes,
  loadNodeWriters,
  loadNodesById,
  loadNodesChangedSince,
  removeNode,
  loadQueuedJobsPerQueue,
  loadRanks,
  setPendingReasons,
} from '@gantry/persistence';
import { makeJob, makeNode, openDataSource, placeJob } from '@gantry/testing';

let ds: DataSource;
beforeAll(async () => (ds = await openDataSource()));
afterAll(async () => {
  // Nothing publishes 'test.placements' (no such topic): left in the shared outbox, these rows would
  // stop every relay that later runs against this database at its head.
  await ds.query(`DELETE FROM outbox WHERE topic = 'test.placements'`);
  await ds.destroy();
});

const write = (job: JobRecord, nodeIds: string[], gpus: number, gpuIndices: number[][] = nodeIds.map(() => [])): PlacementWrite => ({
  jobId: job.id,
  expectedVersion: job.version,
  attempt: 1,
  nodeIds,
  gpuIndices,
  perRank: { gpus, cpuCores: 1, memoryMiB: 1 },
  commands: nodeIds.map((n) => ({ topic: 'test.placements', key: n, value: { jobId: job.id, nodeId: n } })),
});

describe("loadNodesChangedSince (the scheduler's incremental node snapshot)", () => {
  it('reads every node first, then only nodes written since, including writes committed after a read began', async () => {
    const [a, b, untouched] = [await makeNode().gpus(8).insert(ds), await makeNode().gpus(8).insert(ds), await makeNode().gpus(8).insert(ds)];
    const first = await loadNodesChangedSince(autocommit(ds), null);
    expect(first.nodes.map((n) => n.id)).toEqual(expect.arrayContaining([a.id, b.id, untouched.id]));

    // A writer that took its transaction id before the read and commits after it.
    const qr = ds.createQueryRunner();
    await qr.connect();
    await qr.startTransaction();
    await qr.query(`UPDATE nodes SET cpu_allocated = cpu_allocated + 1, version = version + 1 WHERE id = $1`, [b.id]);
    const during = await loadNodesChangedSince(autocommit(ds), first.horizon);
    await qr.commitTransaction();
    await qr.release();
    // The horizon is the oldest transaction still running at the read, and other suites share this
    // database: a node may come back again because some unrelated transaction was open. What must hold
    // is exact: a node is in the answer iff its last writer is at or after `since`, and an uncommitted
    // write is never seen.
    const duringB = during.nodes.find((n) => n.id === b.id);
    if (duringB) expect(duringB.cpuAllocated).toBe(0);
    const untouchedXid = BigInt((await ds.query(`SELECT changed_xid::text AS x FROM nodes WHERE id = $1`, [untouched.id]))[0].x);
    expect(during.nodes.some((n) => n.id === untouched.id)).toBe(untouchedXid >= BigInt(first.horizon));

    await placeJob(ds, await makeJob().gpus(2).insert(ds), [a.id]);
    const after = await loadNodesChangedSince(autocommit(ds), during.horizon);
    const ids = after.nodes.map((n) => n.id);
    // b's write began before `during` and committed after it: the next read must carry it.
    expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(after.nodes.find((n) => n.id === a.id)!.gpusAllocated).toBe(2);
    expect(after.nodes.find((n) => n.id === b.id)!.cpuAllocated).toBe(1);
    expect(ids.includes(untouched.id)).toBe(untouchedXid >= BigInt(during.horizon));
    expect(BigInt(during.horizon)).toBeGreaterThanOrEqual(BigInt(first.horizon));
  });

  it('reads every node in pages, and what was written behind the pages comes with the next read', async () => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await makeNode().gpus(8).insert(ds));
    const [behind, removedBehind] = [made[0], made[1]];
    // After the first page, change a node whose page may already be read and remove another: the
    // read is not one snapshot, and the next incremental read must make up for it.
    let pages = 0;
    let pauses = 0;
    const base = autocommit(ds);
    const sql = {
      ...base,
      rows: async <T>(text: string, params?: unknown[]) => {
        const answer = await base.rows<T>(text, params);
        if (++pages === 1) {
          await ds.query(`UPDATE nodes SET cpu_allocated = 3, version = version + 1 WHERE id = $1`, [behind.id]);
          expect(await removeNode(ds, removedBehind.id, new Date())).not.toBe('not-found');
        }
        return answer;
      },
    };
    const all = await loadNodesChangedSince(sql, null, { pageSize: 2, betweenPages: async () => void pauses++ });
    expect(pages).toBeGreaterThan(3); // pages of two rows over at least five nodes
    expect(pauses).toBe(pages - 1); // a pause between pages, none after the last
    const ids = all.nodes.map((n) => n.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(made.slice(2).map((n) => n.id)));
    const next = await loadNodesChangedSince(autocommit(ds), all.horizon);
    expect(next.nodes.find((n) => n.id === behind.id)?.cpuAllocated).toBe(3);
    expect(next.removed).toContain(removedBehind.id);
  });
});

describe("loadNodeWriters and loadNodesById (the scheduler's periodic check of its copy)", () => {
  it("names the transaction that last wrote each node, as the change feed's rows carry it, and a write changes it", async () => {
    const [a, b] = [await makeNode().gpus(8).insert(ds), await makeNode().gpus(8).insert(ds)];
    const read = await loadNodesChangedSince(autocommit(ds), null);
    const xidOf = (id: string) => read.nodes.find((n) => n.id === id)!.changedXid;
    let pauses = 0;
    const check = await loadNodeWriters(autocommit(ds), { pageSize: 2, betweenPages: async () => void pauses++ });
    expect([check.writers.get(a.id), check.writers.get(b.id)]).toEqual([xidOf(a.id), xidOf(b.id)]);
    expect(pauses).toBeGreaterThan(0); // two nodes or more in pages of two: a full page, then a pause

    await placeJob(ds, await makeJob().gpus(2).insert(ds), [b.id]);
    const again = await loadNodeWriters(autocommit(ds));
    expect(again.writers.get(a.id)).toBe(xidOf(a.id));
    expect(again.writers.get(b.id)).not.toBe(xidOf(b.id));
    expect(BigInt(again.writers.get(b.id)!)).toBeGreaterThanOrEqual(BigInt(check.horizon));
    const [reread] = await loadNodesById(autocommit(ds), [b.id, 'no-such-node']);
    expect([reread.id, reread.gpusAllocated, reread.changedXid]).toEqual([b.id, 2, again.writers.get(b.id)]);
  });
});

describe("loadQueuedJobsPerQueue (a cycle's queue heads)", () => {
  it('reads each queued job with what a cycle plans, commits and explains with, as its row has it', async () => {
    const queue = `heads-${randomUUID().slice(0, 8)}`;
    await insertQueue(autocommit(ds), { name: queue, priority: 1, quotaGpus: null }, new Date());
    const traceParent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const gang = await makeJob().queue(queue).gpus(2).model('H100').cpu(3).memory(2048).gang(2).traceParent(traceParent).maxRuntime(90).insert(ds);
    const later = await makeJob().queue(queue).gpus(1).insert(ds);
    await setPendingReasons(autocommit(ds), [{ jobId: later.id, reason: 'CAPACITY' }]);

    const heads = (await loadQueuedJobsPerQueue(autocommit(ds), 1000)).filter((j) => j.queue === queue);
    const asRow = async (id: string) => {
      const r = (await findJob(autocommit(ds), id))!;
      return {
        id: r.id,
        queue: r.queue,
        owner: r.owner,
        state: r.state,
        attempt: r.attempt,
        version: r.version,
        traceParent: r.traceParent,
        nodes: r.nodes,
        gpus: r.gpus,
        gpuModel: r.gpuModel,
        cpuCores: r.cpuCores,
        memoryMiB: r.memoryMiB,
        pendingReason: r.pendingReason,
        arrayOf: r.arrayOf,
        arrayParallelism: r.arrayParallelism,
        startFailedOn: r.startFailedOn,
        maxRuntimeSeconds: r.maxRuntimeSeconds,
      };
    };
    // Oldest first; exactly these fields (no command, env or times: the relay reads those when it sends the RUN).
    expect(heads).toStrictEqual([await asRow(gang.id), await asRow(later.id)]);
    expect(heads[0]).toMatchObject({ traceParent, nodes: 2, gpus: 2, gpuModel: 'H100', cpuCores: 3, memoryMiB: 2048, state: 'QUEUED', maxRuntimeSeconds: 90 });
    expect(heads[1].maxRuntimeSeconds).toBeNull();
    expect(heads[1].pendingReason).toBe('CAPACITY');
  });
});

describe("commitPlacementsThatHold (a cycle's placements, losers left out)", () => {
  it('commits the placements that hold and leaves out those whose node or job changed', async () => {
    const [a, b, c] = [await makeNode().gpus(8).insert(ds), await makeNode().gpus(8).insert(ds), await makeNode().gpus(8).insert(ds)];
    const [j1, j2, j3, gang] = [
      await makeJob().gpus(2).insert(ds),
      await makeJob().gpus(2).insert(ds),
      await makeJob().gpus(2).insert(ds),
      await makeJob().gpus(1).gang(2).insert(ds),
    ];
    const versions = new Map((await loadNodes(autocommit(ds), [a.id, b.id, c.id])).map((n) => [n.id, n.version]));
    // Node b changes (another writer) and j3 is changed (a cancel) after the plan was made.
    await placeJob(ds, await makeJob().gpus(1).insert(ds), [b.id]);
    await inTransaction(ds, (sql) => casUpdateJob(sql, j3.id, j3.version, {}, 0, new Date()));

    const result = await inTransaction(ds, (sql) =>
      commitPlacementsThatHold(sql, [write(j1, [a.id], 2), write(j2, [b.id], 2), write(j3, [c.id], 2), write(gang, [a.id, b.id], 1)], versions, new Date()),
    );
    expect(result.placed).toEqual([j1.id]);
    expect(result.lost.sort()).toEqual([j2.id, j3.id, gang.id].sort());

    const nodes = new Map((await loadNodes(autocommit(ds), [a.id, b.id, c.id])).map((n) => [n.id, n]));
    expect([nodes.get(a.id)!.gpusAllocated, nodes.get(b.id)!.gpusAllocated, nodes.get(c.id)!.gpusAllocated]).toEqual([2, 1, 0]);
    expect(await findJob(autocommit(ds), j1.id)).toMatchObject({ state: 'SCHEDULED', nodeIds: [a.id] });
    for (const j of [j2, j3, gang]) {
      expect((await findJob(autocommit(ds), j.id))!.state).toBe('QUEUED');
      expect(await loadRanks(autocommit(ds), j.id, 1)).toEqual([]);
    }
  });

  it('leaves out every placement on a node they would over-commit together', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    const [j1, j2] = [await makeJob().gpus(4).insert(ds), await makeJob().gpus(5).insert(ds)];
    const [n] = await loadNodes(autocommit(ds), [node.id]);
    const result = await inTransaction(ds, (sql) =>
      commitPlacementsThatHold(sql, [write(j1, [node.id], 4), write(j2, [node.id], 5)], new Map([[node.id, n.version]]), new Date()),
    );
    expect(result).toEqual({ placed: [], lost: [j1.id, j2.id] });
    expect((await loadNodes(autocommit(ds), [node.id]))[0].gpusAllocated).toBe(0);
  });

  it('does not wait for a node another transaction holds: that placement loses at once', async () => {
    const [a, b] = [await makeNode().gpus(8).insert(ds), await makeNode().gpus(8).insert(ds)];
    const [j1, j2] = [await makeJob().gpus(1).insert(ds), await makeJob().gpus(1).insert(ds)];
    const versions = new Map((await loadNodes(autocommit(ds), [a.id, b.id])).map((n) => [n.id, n.version]));
    const holder = ds.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(`SELECT 1 FROM nodes WHERE id = $1 FOR UPDATE`, [b.id]);
    try {
      const result = await inTransaction(ds, (sql) => commitPlacementsThatHold(sql, [write(j1, [a.id], 1), write(j2, [b.id], 1)], versions, new Date()));
      expect(result).toEqual({ placed: [j1.id], lost: [j2.id] });
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
  });
});
