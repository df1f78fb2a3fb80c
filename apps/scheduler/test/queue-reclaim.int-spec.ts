import { DataSource } from 'typeorm';
import { foldReports } from '@gantry/domain';
import { autocommit, findJob, findJobsWithRanks, insertQueue, writeJobReports } from '@gantry/persistence';
import { makeJob, makeNode, placeJob, uniqueTag } from '@gantry/testing';
import { useSchedulerFixture } from './scheduler-fixture';

/*
 * Reclaim (ADR 0039) with the real scheduling cycle on Postgres and Redis: a child borrows its
 * sibling's unused guarantee through the scheduler; when the lender's work arrives, the cycle tells
 * the newest borrowed attempt to stop (KILL with the preemption grace), the lender waits
 * PREEMPTING, and once the victim's agent reports it stopped the lender is placed on its guarantee.
 */

const fixture = useSchedulerFixture();
let ds: DataSource;
beforeAll(() => {
  ds = fixture.ds;
});

/** What the reconciler writes when an agent reports that its rank of an attempt stopped. */
async function agentStopped(jobId: string, attempt: number, nodeId: string): Promise<void> {
  const { job, ranks } = (await findJobsWithRanks(autocommit(ds), [jobId])).get(jobId)!;
  const folded = foldReports(
    {
      state: job.state,
      attempt: job.attempt,
      started: true,
      nodeIds: job.nodeIds,
      ranks,
      retriesForgiven: job.retriesForgiven,
      preempted: job.preemptedAttempt === job.attempt,
    },
    [{ nodeId, attempt, state: 'CANCELLED', exitCode: null, reason: null }],
  );
  const { written } = await writeJobReports(
    autocommit(ds),
    [
      {
        jobId,
        expectedVersion: job.version,
        lastEventSeq: job.lastEventSeq,
        attempt: job.attempt,
        state: folded.state,
        start: false,
        end: folded.end,
        retryAt: null,
        preempted: folded.preempted,
        events: folded.events,
        ranks: folded.ranks,
      },
    ],
    [],
    new Date(),
  );
  expect(written.has(jobId)).toBe(true);
}

const heldBy = async (queue: string) => Number((await ds.query(`SELECT gpus FROM queue_gpus_held WHERE queue = $1`, [queue]))[0].gpus);

describe('reclaim of borrowed GPUs', () => {
  it('a lender gets its guarantee back: the newest borrowed attempt is preempted with the grace, and the lender placed once it stopped', async () => {
    const model = uniqueTag('GPU');
    const [org, lender, borrower] = [uniqueTag('org'), uniqueTag('lender'), uniqueTag('borrower')];
    await insertQueue(autocommit(ds), { name: org, priority: 40, quotaGpus: null }, new Date());
    await insertQueue(autocommit(ds), { name: lender, priority: 40, quotaGpus: 4, parent: org, preemption: 'lowerPriority' }, new Date());
    await insertQueue(autocommit(ds), { name: borrower, priority: 40, quotaGpus: 4, parent: org, borrowingLimitGpus: 4 }, new Date());
    const nodes = await Promise.all(Array.from({ length: 2 }, () => makeNode().gpus(8, model).insert(ds)));
    const ids = nodes.map((n) => n.id);
    await fixture.heard(ids);

    // The borrower holds its 4 and borrows the lender's 4 (the cohort's 8), oldest first.
    const borrowed = [];
    for (let i = 0; i < 4; i++) {
      const job = await makeJob().queue(borrower).gpus(2).model(model).insert(ds);
      borrowed.push(await placeJob(ds, job, [ids[i % 2]], { running: true, now: new Date(Date.now() - (10 - i) * 1000) }));
    }
    expect(await heldBy(borrower)).toBe(8);
    const overLimit = await makeJob().queue(borrower).gpus(1).model(model).insert(ds);

    const want = await makeJob().queue(lender).gpus(2).model(model).insert(ds);
    const scheduler = fixture.cycle({ GANTRY_PREEMPTION_GRACE_MS: 1500, GANTRY_PREEMPTION_COOLDOWN_MS: 600_000 });
    // A scheduler's first cycle reads what is stopping only once it has seen a preemptive queue (ADR 0026): the second preempts.
    await scheduler.run();
    await scheduler.run();
    // The newest borrowed attempt is told to stop for the lender, with the grace on its KILL; nothing else moves.
    const newest = borrowed[3];
    expect(await findJob(autocommit(ds), newest.id)).toMatchObject({ preemptedFor: want.id, preemptedAttempt: 1 });
    const kills: Array<{ value: { graceMs: number; reason: string } }> = await ds.query(
      `SELECT value::jsonb AS value FROM outbox WHERE key = $1 AND value::jsonb->>'jobId' = $2`,
      [newest.nodeIds[0], newest.id],
    );
    expect(kills.map((k) => [k.value.reason, k.value.graceMs])).toEqual([['PREEMPTED', 1500]]);
    for (const other of borrowed.slice(0, 3)) expect((await findJob(autocommit(ds), other.id))!.preemptedAttempt).toBeNull();
    expect(await findJob(autocommit(ds), want.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'PREEMPTING' });
    expect((await findJob(autocommit(ds), overLimit.id))!.pendingReason).toBe('QUOTA_EXCEEDED');

    // Until the victim has stopped, the lender waits and nothing more is preempted.
    await scheduler.run();
    expect(await findJob(autocommit(ds), want.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'PREEMPTING' });
    expect((await ds.query(`SELECT count(*)::int AS n FROM jobs WHERE preempted_for = $1`, [want.id]))[0].n).toBe(1);

    await agentStopped(newest.id, 1, newest.nodeIds[0]);
    expect(await heldBy(borrower)).toBe(6);
    await fixture.heard(ids);
    await scheduler.run();
    expect(await findJob(autocommit(ds), want.id)).toMatchObject({ state: 'SCHEDULED' });
    // The borrower's requeued job and its job past its limit wait: the cohort is full again, the lender within its guarantee.
    expect(await findJob(autocommit(ds), newest.id)).toMatchObject({ state: 'QUEUED', retriesForgiven: 1 });
    expect([await heldBy(lender), await heldBy(borrower)]).toEqual([2, 6]);
  }, 60_000);
});
