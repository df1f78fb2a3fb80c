import { DataSource } from 'typeorm';
import { QueueLimitSpec, chooseGpuIndices, judgeQuota, placementFence, queueLimits } from '@gantry/domain';
import {
  JobRecord,
  PlacementWrite,
  autocommit,
  commitPlacementsThatHold,
  findJobs,
  inTransaction,
  insertQueue,
  loadNodes,
  loadRanks,
  releaseQueueGpus,
  releaseRank,
  writeJobReports,
} from '@gantry/persistence';
import { makeJob, makeNode, openDataSource, seededRandom, uniqueTag } from '@gantry/testing';

/*
 * Quotas and borrowing limits hold with several schedulers committing at once (ADR 0039): three
 * replicas plan from their own reads of the counts, each on nodes no other touches (so only the
 * quota fence stands between them and a queue past its limit), while ranks are released through
 * both release paths, and a watcher reads Postgres as often as it can: at no read does a queue or a
 * cohort hold more than its limit, and every queue's count equals what its unreleased ranks hold.
 */

jest.setTimeout(120_000);

let ds: DataSource;
beforeAll(async () => (ds = await openDataSource()));
afterAll(async () => ds?.destroy());

const write = (job: JobRecord, nodeIds: string[], gpuIndices: number[][]): PlacementWrite => ({
  jobId: job.id,
  expectedVersion: job.version,
  attempt: job.attempt + 1,
  nodeIds,
  gpuIndices,
  perRank: { gpus: job.gpus, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB },
  commands: [],
});

/** Queue counts, what unreleased ranks hold per queue, read in one statement (one snapshot). */
async function readHoldings(names: string[]): Promise<Array<{ queue: string; counted: number; live: number }>> {
  const rows: Array<{ queue: string; counted: string; live: string }> = await ds.query(
    `SELECT c.queue, c.gpus AS counted,
       COALESCE((SELECT sum(a.gpus) FROM jobs j JOIN attempt_nodes a ON a.job_id = j.id AND a.released_at IS NULL WHERE j.queue = c.queue), 0) AS live
     FROM queue_gpus_held c WHERE c.queue = ANY($1::text[])`,
    [names],
  );
  return rows.map((r) => ({ queue: r.queue, counted: Number(r.counted), live: Number(r.live) }));
}

describe('the quota fence in the placement commit', () => {
  it('keeps a queue within its cap and a cohort within its guarantees, the counts exact, with three replicas racing and ranks released', async () => {
    const tag = uniqueTag('fence');
    // org guarantees 2 of its own; a (4, borrows up to 6) and b (4, borrows up to 2) share org's cohort of 10; solo is capped at 5.
    const tree: QueueLimitSpec[] = [
      { name: `${tag}-org`, parent: null, quotaGpus: 2, borrowingLimitGpus: 0 },
      { name: `${tag}-a`, parent: `${tag}-org`, quotaGpus: 4, borrowingLimitGpus: 6 },
      { name: `${tag}-b`, parent: `${tag}-org`, quotaGpus: 4, borrowingLimitGpus: 2 },
      { name: `${tag}-solo`, parent: null, quotaGpus: 5, borrowingLimitGpus: 0 },
    ];
    for (const q of tree)
      await insertQueue(
        autocommit(ds),
        { name: q.name, priority: 1, quotaGpus: q.quotaGpus, parent: q.parent, borrowingLimitGpus: q.borrowingLimitGpus },
        new Date(),
      );
    const limits = queueLimits(tree);
    const names = tree.map((q) => q.name);
    const nodes = await Promise.all(Array.from({ length: 12 }, () => makeNode().gpus(8).insert(ds)));
    const jobs: JobRecord[] = [];
    const rand = seededRandom(7);
    for (let i = 0; i < 160; i++)
      jobs.push(
        await makeJob()
          .queue(names[i % names.length])
          .gpus(1 + Math.floor(rand() * 2))
          .gang(rand() < 0.2 ? 2 : 1)
          .insert(ds),
      );
    const jobIds = jobs.map((j) => j.id);

    let racing = true;
    const violations: string[] = [];
    const watcher = (async () => {
      let reads = 0;
      while (racing || reads === 0) {
        const held = await readHoldings(names);
        const byQueue = new Map(held.map((h) => [h.queue, h.live]));
        for (const h of held) {
          if (h.counted !== h.live) violations.push(`${h.queue} counted ${h.counted}, its ranks hold ${h.live}`);
          const cap = limits.cap.get(h.queue);
          if (cap !== undefined && h.live > cap) violations.push(`${h.queue} holds ${h.live} > ${cap}`);
        }
        for (const [cohort, cap] of limits.cohortCap) {
          const sum = [...limits.cohortOf].filter(([, c]) => c === cohort).reduce((s, [q]) => s + (byQueue.get(q) ?? 0), 0);
          if (sum > cap) violations.push(`cohort ${cohort} holds ${sum} > ${cap}`);
        }
        reads++;
      }
      return reads;
    })();

    // Every round, the replicas commit together, each a plan made before any of them committed.
    let waiting: Array<() => void> = [];
    const together = () =>
      new Promise<void>((go) => {
        waiting.push(go);
        if (waiting.length === 3) [waiting, (waiting = [])][0].forEach((f) => f());
      });

    // A replica: plan from its own read (queued jobs, counts, its own nodes), within the limits as it sees them, and commit.
    const replica = async (index: number) => {
      const own = nodes.filter((_, i) => i % 3 === index).map((n) => n.id);
      let placed = 0;
      for (let round = 0; round < 40; round++) {
        const counts = new Map((await readHoldings(names)).map((h) => [h.queue, h.counted]));
        const free = new Map((await loadNodes(autocommit(ds), own)).map((n) => [n.id, n]));
        const writes: PlacementWrite[] = [];
        for (const job of (await findJobs(autocommit(ds), jobIds)).filter((j) => j.state === 'QUEUED')) {
          if (judgeQuota(limits, counts, job.queue, job.gpus * job.nodes) !== 'ADMIT') continue;
          const chosen = [...free.values()].filter((n) => n.gpusTotal - n.gpusAllocated >= job.gpus).slice(0, job.nodes);
          if (chosen.length < job.nodes) continue;
          const devices = chosen.map((n) => chooseGpuIndices(n, job.gpus)!);
          chosen.forEach((n, r) => free.set(n.id, { ...n, gpusAllocated: n.gpusAllocated + job.gpus, gpusHeld: [...n.gpusHeld, ...devices[r]] }));
          counts.set(job.queue, (counts.get(job.queue) ?? 0) + job.gpus * job.nodes);
          writes.push(
            write(
              job,
              chosen.map((n) => n.id),
              devices,
            ),
          );
        }
        const versions = new Map((await loadNodes(autocommit(ds), own)).map((n) => [n.id, n.version]));
        const fence = placementFence(
          limits,
          writes.map((w) => jobs.find((j) => j.id === w.jobId)!.queue),
        );
        await together();
        placed += (await commitPlacementsThatHold(autocommit(ds), writes, versions, new Date(), fence)).placed.length;
      }
      return placed;
    };

    // Ends placed jobs at random, half through the report write, half as the attempt-loss applier does.
    const releaser = async () => {
      let released = 0;
      for (let round = 0; round < 60 && racing; round++) {
        const running = (await findJobs(autocommit(ds), jobIds)).filter((j) => j.state === 'SCHEDULED');
        const job = running[Math.floor(rand() * running.length)];
        if (!job) continue;
        const ranks = await loadRanks(autocommit(ds), job.id, job.attempt);
        if (round % 2 === 0) {
          await writeJobReports(
            autocommit(ds),
            [
              {
                jobId: job.id,
                expectedVersion: job.version,
                lastEventSeq: job.lastEventSeq,
                attempt: job.attempt,
                state: 'SUCCEEDED',
                start: false,
                end: { exitCode: 0, reason: null },
                retryAt: null,
                events: [],
                ranks: ranks.map((r) => ({ nodeId: r.nodeId, state: 'SUCCEEDED', exitCode: 0, release: true })),
              },
            ],
            [],
            new Date(),
          );
        } else {
          await inTransaction(ds, async (sql) => {
            const [locked] = await sql.rows(`UPDATE jobs SET state = 'SUCCEEDED', version = version + 1 WHERE id = $1 AND version = $2 RETURNING id`, [
              job.id,
              job.version,
            ]);
            if (!locked) return;
            let freed = 0;
            for (const r of ranks) if (await releaseRank(sql, job.id, job.attempt, r.nodeId, new Date(), 'SUCCEEDED')) freed += job.gpus;
            await releaseQueueGpus(sql, [{ queue: job.queue, gpus: freed }]);
          });
        }
        released++;
      }
      return released;
    };

    const raced = Promise.all([Promise.all([0, 1, 2].map(replica)), releaser()]);
    const [placed, released] = await raced.finally(() => (racing = false));
    const reads = await watcher;
    expect(violations).toEqual([]);
    // The race happened: the replicas together placed more than any limit allows at once, and the watcher saw it going on.
    expect(placed.reduce((a, b) => a + b, 0)).toBeGreaterThan(15);
    expect(released).toBeGreaterThan(10);
    expect(reads).toBeGreaterThan(10);
    const end = await readHoldings(names);
    expect(end.every((h) => h.counted === h.live)).toBe(true);
  });
});
