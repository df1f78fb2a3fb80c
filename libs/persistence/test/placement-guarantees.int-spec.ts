import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import {
  ConcurrentUpdateError,
  JobRecord,
  PlacementWrite,
  appendJobEvents,
  autocommit,
  casUpdateJob,
  commitPlacementsThatHold,
  findJob,
  inTransaction,
  listJobEvents,
  loadNodes,
  loadRanks,
  releaseRank,
  upsertNodeTopology,
} from '@gantry/persistence';
import { makeJob, makeNode, openDataSource, placeJob, testEnv } from '@gantry/testing';

/*
 * The placement guarantee as the scheduler runs it (commitPlacementsThatHold, ADR 0012): a node is
 * never over-committed and a job is never placed twice, whoever races for them.
 */

const TOPIC = 'test.placement-guarantees';
let ds: DataSource;
beforeAll(async () => (ds = await openDataSource()));
afterAll(async () => {
  // Nothing publishes this topic: left in the shared outbox, the rows would stop every relay at its head.
  await ds.query(`DELETE FROM outbox WHERE topic = $1`, [TOPIC]);
  await ds.destroy();
});

/** Without `gpuIndices` the ranks take GPU counts but no recorded devices, as attempts placed before devices were assigned. */
const write = (job: JobRecord, nodeIds: string[], gpuIndices: number[][] = nodeIds.map(() => [])): PlacementWrite => ({
  jobId: job.id,
  expectedVersion: job.version,
  attempt: job.attempt + 1,
  nodeIds,
  gpuIndices,
  perRank: { gpus: job.gpus, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB },
  commands: nodeIds.map((n) => ({ topic: TOPIC, key: n, value: { jobId: job.id, nodeId: n } })),
});
const versionsOf = async (ids: string[]) => new Map((await loadNodes(autocommit(ds), ids)).map((n) => [n.id, n.version]));
const commit = async (writes: PlacementWrite[], versions: Map<string, number>) => commitPlacementsThatHold(autocommit(ds), writes, versions, new Date());

describe('commitPlacementsThatHold (the placement guarantee)', () => {
  it('takes capacity at the version the plan was read at and bumps it; the same plan again places nothing', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    const job = await makeJob().gpus(3).insert(ds);
    const versions = await versionsOf([node.id]);
    expect(await commit([write(job, [node.id])], versions)).toEqual({ placed: [job.id], lost: [] });
    const [after] = await loadNodes(autocommit(ds), [node.id]);
    expect([after.gpusAllocated, after.version]).toEqual([3, versions.get(node.id)! + 1]);

    // Replayed (a retry of the same cycle, another replica with the same snapshot): the job is placed once.
    const other = await makeJob().gpus(1).insert(ds);
    expect(await commit([write(job, [node.id]), write(other, [node.id])], versions)).toEqual({ placed: [], lost: [job.id, other.id] });
    expect(await commit([write(job, [node.id])], await versionsOf([node.id]))).toEqual({ placed: [], lost: [job.id] });
    expect((await loadNodes(autocommit(ds), [node.id]))[0].gpusAllocated).toBe(3);
    expect(await loadRanks(autocommit(ds), job.id, 1)).toHaveLength(1);
    expect((await listJobEvents(autocommit(ds), job.id, 0, 10)).map((e) => e.toState)).toEqual(['QUEUED', 'SCHEDULED']);
  });

  it('takes the devices with the capacity: on each rank, on the job, held on the node, handed back with the release', async () => {
    const [a, b] = [await makeNode().gpus(8).address('10.0.0.1').insert(ds), await makeNode().gpus(8).insert(ds)];
    const gang = await makeJob().gpus(2).gang(2).insert(ds);
    expect(
      await commit(
        [
          write(
            gang,
            [a.id, b.id],
            [
              [0, 1],
              [6, 7],
            ],
          ),
        ],
        await versionsOf([a.id, b.id]),
      ),
    ).toEqual({ placed: [gang.id], lost: [] });
    const ranks: Array<{ rank: number; gpu_indices: number[] }> = await ds.query(
      `SELECT rank, gpu_indices FROM attempt_nodes WHERE job_id = $1 ORDER BY rank`,
      [gang.id],
    );
    expect(ranks).toEqual([
      { rank: 0, gpu_indices: [0, 1] },
      { rank: 1, gpu_indices: [6, 7] },
    ]);
    expect(await findJob(autocommit(ds), gang.id)).toMatchObject({ gpuIndices: [0, 1, 6, 7], masterAddr: '10.0.0.1' });
    expect((await loadNodes(autocommit(ds), [a.id, b.id])).map((n) => [n.id, n.gpusHeld])).toEqual(
      [
        [a.id, [0, 1]],
        [b.id, [6, 7]],
      ].sort(),
    );

    // The next placement on a takes other devices; a's release gives back only its own.
    const next = await placeJob(ds, await makeJob().gpus(3).insert(ds), [a.id]);
    expect(next.gpuIndices).toEqual([2, 3, 4]);
    await inTransaction(ds, (sql) => releaseRank(sql, gang.id, 1, a.id, new Date(), 'CANCELLED'));
    expect((await loadNodes(autocommit(ds), [a.id]))[0]).toMatchObject({ gpusAllocated: 3, gpusHeld: [2, 3, 4] });
  });

  it('keeps a plan read before a release: the release gives back without moving the version, and the placement still holds', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    const first = await placeJob(ds, await makeJob().gpus(6).insert(ds), [node.id]);
    const versions = await versionsOf([node.id]);
    // Planned on what was free then (GPUs 6 and 7); the first job ends before the plan is committed.
    const next = await makeJob().gpus(2).insert(ds);
    expect(await inTransaction(ds, (sql) => releaseRank(sql, first.id, 1, node.id, new Date(), 'SUCCEEDED'))).toBe(true);
    expect((await loadNodes(autocommit(ds), [node.id]))[0]).toMatchObject({ gpusAllocated: 0, gpusHeld: [], version: versions.get(node.id) });
    expect(await commit([write(next, [node.id], [[6, 7]])], versions)).toEqual({ placed: [next.id], lost: [] });
    expect((await loadNodes(autocommit(ds), [node.id]))[0]).toMatchObject({ gpusAllocated: 2, gpusHeld: [6, 7], version: versions.get(node.id)! + 1 });
  });

  it.each<[string, number[], number[][]]>([
    ['a device another live rank holds', [0, 1, 2, 3, 4, 5, 6, 7], [[3, 4]]],
    ['a device the node does not report healthy', [0, 1, 2, 4, 5, 6, 7], [[2, 3]]],
    ['the same device twice', [0, 1, 2, 3, 4, 5, 6, 7], [[5, 5]]],
  ])('refuses %s, even at the right version', async (_name, healthy, devices) => {
    const node = await makeNode().devices(healthy).insert(ds);
    const first = await makeJob().gpus(1).insert(ds);
    expect(await commit([write(first, [node.id], [[4]])], await versionsOf([node.id]))).toEqual({ placed: [first.id], lost: [] });
    const job = await makeJob().gpus(2).insert(ds);
    expect(await commit([write(job, [node.id], devices)], await versionsOf([node.id]))).toEqual({ placed: [], lost: [job.id] });
    expect((await loadNodes(autocommit(ds), [node.id]))[0]).toMatchObject({ gpusAllocated: 1, gpusHeld: [4] });
  });

  it('the database itself refuses a device held twice', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    await expect(ds.query(`UPDATE nodes SET gpus_held = '{1,2,1}' WHERE id = $1`, [node.id])).rejects.toThrow(/nodes_gpus_held_distinct/);
  });

  it('never over-commits a node, even at the right version', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    const job = await makeJob().gpus(9).insert(ds);
    expect(await commit([write(job, [node.id])], await versionsOf([node.id]))).toEqual({ placed: [], lost: [job.id] });
    expect((await loadNodes(autocommit(ds), [node.id]))[0].gpusAllocated).toBe(0);
  });

  it('places a gang whole or not at all: one changed node leaves every rank out', async () => {
    const [a, b] = [await makeNode().gpus(8).insert(ds), await makeNode().gpus(8).insert(ds)];
    const gang = await makeJob().gpus(4).gang(2).insert(ds);
    const versions = await versionsOf([a.id, b.id]);
    await placeJob(ds, await makeJob().gpus(1).insert(ds), [b.id]);
    expect(await commit([write(gang, [a.id, b.id])], versions)).toEqual({ placed: [], lost: [gang.id] });
    const after = new Map((await loadNodes(autocommit(ds), [a.id, b.id])).map((n) => [n.id, n.gpusAllocated]));
    expect([after.get(a.id), after.get(b.id)]).toEqual([0, 1]);
    expect(await loadRanks(autocommit(ds), gang.id, 1)).toEqual([]);
  });

  it('several processes racing over the same nodes: no node over-committed, no job placed twice', async () => {
    const racer = builtRacer();
    // 8 nodes of 4 GPUs for 40 jobs asking for 1 to 3 GPUs each (some as gangs of 2): about twice
    // what fits. Each racer's first plan wants the same jobs, each on nodes of its own (see the
    // racer); its later plans collide with the others' on nodes.
    const nodes = await Promise.all(Array.from({ length: 8 }, () => makeNode().gpus(4).cpu(8).memory(65536).insert(ds)));
    const jobs = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        makeJob()
          .gpus(1 + (i % 3))
          .gang(i % 5 === 0 ? 2 : 1)
          .insert(ds),
      ),
    );
    const racers = [0, 1, 2, 3].map((index) =>
      startRacer(racer, {
        RACE_NODES: nodes.map((n) => n.id).join(','),
        RACE_JOBS: jobs.map((j) => j.id).join(','),
        RACE_INDEX: String(index),
        RACE_RACERS: '4',
        RACE_TOPIC: TOPIC,
      }),
    );
    await Promise.all(racers.map((r) => r.ready));
    for (const r of racers) r.go();
    const results = await Promise.all(racers.map((r) => r.done));

    // Every racer ran to the end and they really raced: placements were lost to one another.
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    expect(results.reduce((n, r) => n + r.lost, 0)).toBeGreaterThan(0);

    // No node over-committed, and what each node says it has allocated is what its ranks hold.
    const perNode: Array<{
      id: string;
      gpus_total: number;
      gpus_allocated: number;
      cpu_allocated: number;
      memory_allocated: string;
      held_gpus: number;
      held_cpu: number;
      held_mem: string;
    }> = await ds.query(
      `SELECT n.id, n.gpus_total, n.gpus_allocated, n.cpu_allocated, n.memory_allocated,
         coalesce(sum(a.gpus), 0)::int AS held_gpus, coalesce(sum(a.cpu_cores), 0)::int AS held_cpu, coalesce(sum(a.memory_mib), 0) AS held_mem
       FROM nodes n LEFT JOIN attempt_nodes a ON a.node_id = n.id AND a.released_at IS NULL
       WHERE n.id = ANY($1::text[]) GROUP BY n.id`,
      [nodes.map((n) => n.id)],
    );
    for (const n of perNode) {
      expect(n.gpus_allocated).toBeLessThanOrEqual(n.gpus_total);
      expect([n.gpus_allocated, n.cpu_allocated, Number(n.memory_allocated)]).toEqual([n.held_gpus, n.held_cpu, Number(n.held_mem)]);
    }

    // No device held by two live ranks, each rank holds exactly its GPU count, and what each node
    // says it holds is exactly what its live ranks hold.
    const devices: Array<{ node_id: string; gpus: number; gpu_indices: number[] }> = await ds.query(
      `SELECT node_id, gpus, gpu_indices FROM attempt_nodes WHERE released_at IS NULL AND node_id = ANY($1::text[])`,
      [nodes.map((n) => n.id)],
    );
    const heldBy = new Map<string, number[]>();
    for (const r of devices) {
      expect(r.gpu_indices).toHaveLength(r.gpus);
      heldBy.set(r.node_id, [...(heldBy.get(r.node_id) ?? []), ...r.gpu_indices]);
    }
    for (const n of await loadNodes(
      autocommit(ds),
      nodes.map((x) => x.id),
    )) {
      const held = heldBy.get(n.id) ?? [];
      expect(new Set(held).size).toBe(held.length);
      expect([...n.gpusHeld].sort()).toEqual([...held].sort());
      for (const d of held) expect(n.gpuIndices).toContain(d);
    }

    // No job placed twice: one racer says it placed it, and the database holds one placement of it:
    // attempt 1, one rank per node of the gang on distinct nodes, one SCHEDULED event, one RUN per rank.
    const claimed = results.flatMap((r) => r.placed);
    expect(new Set(claimed).size).toBe(claimed.length);
    const placedJobs = new Set<string>();
    for (const job of jobs) {
      const now = (await findJob(autocommit(ds), job.id))!;
      const ranks: Array<{ attempt: number; node_id: string }> = await ds.query(`SELECT attempt, node_id FROM attempt_nodes WHERE job_id = $1`, [job.id]);
      const events = (await listJobEvents(autocommit(ds), job.id, 0, 10)).map((e) => e.toState);
      const runs: Array<{ n: number }> = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE topic = $1 AND value::jsonb->>'jobId' = $2`, [
        TOPIC,
        job.id,
      ]);
      if (now.state === 'QUEUED') {
        expect([ranks, events, runs[0].n]).toEqual([[], ['QUEUED'], 0]);
        continue;
      }
      placedJobs.add(job.id);
      expect(now).toMatchObject({ state: 'SCHEDULED', attempt: 1 });
      expect(ranks.map((r) => r.attempt)).toEqual(Array(job.nodes).fill(1));
      expect(new Set(ranks.map((r) => r.node_id)).size).toBe(job.nodes);
      expect(events).toEqual(['QUEUED', 'SCHEDULED']);
      expect(runs[0].n).toBe(job.nodes);
    }
    expect(placedJobs.size).toBeGreaterThan(0);
    expect(new Set(claimed)).toEqual(placedJobs);
  }, 120_000);

  it('the database itself refuses a negative allocation (a double release)', async () => {
    const node = await makeNode().gpus(2).insert(ds);
    await expect(ds.query(`UPDATE nodes SET gpus_allocated = -1 WHERE id = $1`, [node.id])).rejects.toThrow(/nodes_allocation_non_negative/);
  });

  it('records a node shrinking below what its running work holds, and places nothing more on it', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    await placeJob(ds, await makeJob().gpus(8).insert(ds), [node.id]);
    await upsertNodeTopology(autocommit(ds), [{ ...node, gpusTotal: 6, gpuIndices: [0, 1, 2, 3, 4, 5] }], new Date());
    const [shrunk] = await loadNodes(autocommit(ds), [node.id]);
    expect([shrunk.gpusTotal, shrunk.gpusAllocated]).toEqual([6, 8]);
    const cpuOnly = await makeJob().gpus(0).insert(ds);
    expect(await commit([write(cpuOnly, [node.id])], await versionsOf([node.id]))).toEqual({ placed: [], lost: [cpuOnly.id] });
  });
});

describe('releaseRank', () => {
  it('gives capacity back exactly once', async () => {
    const node = await makeNode().gpus(8).insert(ds);
    const job = await placeJob(ds, await makeJob().gpus(4).insert(ds), [node.id]);
    const first = await Promise.all(Array.from({ length: 5 }, () => inTransaction(ds, (sql) => releaseRank(sql, job.id, 1, node.id, new Date(), 'SUCCEEDED'))));
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
    await expect(inTransaction(ds, (sql) => casUpdateJob(sql, job.id, job.version, { state: 'CANCELLED' }, 1, new Date()))).rejects.toBeInstanceOf(
      ConcurrentUpdateError,
    );
    expect((await findJob(autocommit(ds), job.id))!.state).toBe('SCHEDULED');
  });
});

const ROOT = join(__dirname, '..', '..', '..');

/**
 * The racer runs from the build output, like every process the tests start (npm test builds
 * first). A build older than the code it would race is refused rather than trusted.
 */
function builtRacer(): string {
  const pairs = [
    ['libs/persistence/test/placement-racer.ts', 'dist/libs/persistence/test/placement-racer.js'],
    ['libs/persistence/src/sql/placement-commit.ts', 'dist/libs/persistence/src/sql/placement-commit.js'],
  ];
  for (const [src, out] of pairs) {
    if (!existsSync(join(ROOT, out)) || statSync(join(ROOT, out)).mtimeMs < statSync(join(ROOT, src)).mtimeMs) {
      throw new Error(`${out} is missing or older than ${src}: run \`npm run build\` (npm test does)`);
    }
  }
  return join(ROOT, pairs[0][1]);
}

function startRacer(script: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, DATABASE_URL: testEnv.databaseUrl, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.startsWith('ready\n')) onReady();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<{ code: number | null; placed: string[]; lost: number }>((resolve) =>
    child.on('exit', (code) => {
      onReady(); // a racer that died before it was ready must not hold the others
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0) process.stderr.write(`placement racer exited ${code}: ${err}\n`);
      const result = code === 0 ? (JSON.parse(last) as { placed: string[]; lost: number }) : { placed: [], lost: 0 };
      resolve({ code, ...result });
    }),
  );
  return { ready, done, go: () => child.stdin.end('go\n') };
}
