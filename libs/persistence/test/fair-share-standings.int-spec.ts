import { DataSource } from 'typeorm';
import { randomUUID } from 'node:crypto';
import { decayedGpuSeconds } from '@gantry/domain';
import { autocommit, insertQueue, loadFairShareStandings, loadFairShareWaiting, releaseRank } from '@gantry/persistence';
import { makeJob, makeNode, openDataSource, placeJob } from '@gantry/testing';

/* What the scheduler and the gateway read for decayed fair share (ADR 0038), on real Postgres. */

let ds: DataSource;
beforeAll(async () => {
  ds = await openDataSource();
});
afterAll(async () => {
  await ds?.destroy();
});

const HOUR_MS = 3_600_000;

async function newQueue(): Promise<string> {
  const name = `fs-${randomUUID().slice(0, 8)}`;
  await insertQueue(autocommit(ds), { name, priority: 1, quotaGpus: null }, new Date());
  return name;
}

describe('loadFairShareStandings', () => {
  it("decays ended usage from its as_of, and adds live ranks' decayed GPU-seconds from their placement, per queue and owner", async () => {
    const queue = await newQueue();
    const nowMs = Date.now();
    await ds.query(`INSERT INTO fair_share_usage (queue, owner, gpu_seconds, as_of) VALUES ($1, 'alice', 1000, $2), ($1, 'bob', 500, $3)`, [
      queue,
      new Date(nowMs - HOUR_MS),
      new Date(nowMs),
    ]);
    // bob: a gang of two 4-GPU ranks placed two hours ago, still live; its ended attempt's ranks count nothing here.
    const [a, b] = [await makeNode().gpus(8).insert(ds), await makeNode().gpus(8).insert(ds)];
    const gang = await placeJob(ds, await makeJob().queue(queue).owner('bob').gpus(4).gang(2).insert(ds), [a.id, b.id]);
    const placedAt = nowMs - 2 * HOUR_MS;
    await ds.query(`UPDATE attempt_nodes SET created_at = $2 WHERE job_id = $1`, [gang.id, new Date(placedAt)]);

    const standings = await loadFairShareStandings(autocommit(ds), nowMs, 3600);
    const mine = standings.get(queue)!;
    expect(mine.get('alice')!.usage).toBeCloseTo(500, 6);
    expect(mine.get('alice')!.gpus).toBe(0);
    expect(mine.get('bob')!.usage).toBeCloseTo(500 + decayedGpuSeconds(8, placedAt, nowMs, nowMs, 3600), 3);
    expect(mine.get('bob')!.gpus).toBe(8);

    // Released ranks count no more (the ledger has added them to fair_share_usage by then).
    await ds.query(`UPDATE attempt_nodes SET released_at = now() WHERE job_id = $1`, [gang.id]);
    const after = (await loadFairShareStandings(autocommit(ds), nowMs, 3600)).get(queue)!;
    expect([after.get('bob')!.usage, after.get('bob')!.gpus]).toEqual([500, 0]);
  });

  it('counts a released rank the same before and after its release, while its usage record waits for the fold', async () => {
    const queue = await newQueue();
    const node = await makeNode().gpus(8).insert(ds);
    const job = await placeJob(ds, await makeJob().queue(queue).owner('carol').gpus(4).insert(ds), [node.id]);
    const placedAt = Date.now() - HOUR_MS;
    await ds.query(`UPDATE attempt_nodes SET created_at = $2 WHERE job_id = $1`, [job.id, new Date(placedAt)]);
    const endedAt = new Date();
    const nowMs = endedAt.getTime() + 10 * 60_000;
    const live = (await loadFairShareStandings(autocommit(ds), nowMs, 3600)).get(queue)!.get('carol')!;

    // The release writes an unfolded usage record from created_at to released_at (ADR 0037).
    expect(await releaseRank(autocommit(ds), job.id, job.attempt, node.id, endedAt, 'SUCCEEDED')).toBe(true);
    const ended = (await loadFairShareStandings(autocommit(ds), nowMs, 3600)).get(queue)!.get('carol')!;
    expect(ended.gpus).toBe(0);
    expect(ended.usage).toBeCloseTo(decayedGpuSeconds(4, placedAt, endedAt.getTime(), nowMs, 3600), 3);
    // Live, it had run to now; ended, it stopped ten minutes before: less, but not gone.
    expect(ended.usage).toBeLessThan(live.usage);
    expect(ended.usage).toBeGreaterThan(live.usage * 0.7);
  });

  it('keeps clear of float underflow for ranks placed thousands of half-lives ago', async () => {
    const queue = await newQueue();
    const node = await makeNode().gpus(8).insert(ds);
    const job = await placeJob(ds, await makeJob().queue(queue).gpus(2).insert(ds), [node.id]);
    await ds.query(`UPDATE attempt_nodes SET created_at = now() - interval '3000 hours' WHERE job_id = $1`, [job.id]);
    const s = (await loadFairShareStandings(autocommit(ds), Date.now(), 1)).get(queue)!.get('test')!;
    expect(s.usage).toBeCloseTo(2 / Math.LN2, 6);
  });
});

describe('loadFairShareWaiting', () => {
  it('names the queues with placeable queued jobs and the owners waiting in one queue', async () => {
    const queue = await newQueue();
    await makeJob().queue(queue).owner('carol').insert(ds);
    await makeJob().queue(queue).owner('dave').insert(ds);
    const w = await loadFairShareWaiting(autocommit(ds), queue);
    expect([...w.owners].sort()).toEqual(['carol', 'dave']);
    expect(w.queues.has(queue)).toBe(true);
    expect(w.queues.has(await newQueue())).toBe(false);
  });
});
