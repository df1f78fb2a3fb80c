import { DataSource } from 'typeorm';
import { DependencyCondition, JOB_STATES, JobState, dependencyStatus } from '@gantry/domain';
import {
  JobRecord,
  autocommit,
  casUpdateJob,
  createJobs,
  findJob,
  inTransaction,
  insertJobDependencies,
  listJobEvents,
  loadQueuedJobsPerQueue,
  lockUpstreamJobs,
} from '@gantry/persistence';
import { waitFor } from '@gantry/stack';
import { makeJob, openDataSource, uniqueTag } from '@gantry/testing';

/*
 * The end-of-job trigger (migration AddJobDependencies) against dependencyStatus, the rule it
 * implements in SQL: for every condition and every state an upstream job can move to, the
 * dependent ends up as the domain function says. Then propagation down a chain, and the
 * scheduler's read leaving out jobs that wait.
 */

let ds: DataSource;
beforeAll(async () => (ds = await openDataSource()));
afterAll(async () => ds.destroy());

/** A dependent created as the gateway does: upstream jobs locked, pending counted, rows written together. */
async function dependent(on: Array<{ job: JobRecord; condition: DependencyCondition }>, queue = 'default'): Promise<JobRecord> {
  return inTransaction(ds, async (sql) => {
    const upstream = await lockUpstreamJobs(
      sql,
      on.map((d) => d.job.id),
    );
    const pending = on.filter((d) => dependencyStatus(d.condition, upstream.find((u) => u.id === d.job.id)!.state) === 'waiting').length;
    const [created] = await createJobs(sql, [{ job: { ...makeJob().queue(queue).build(), depsPending: pending }, idempotency: null }], new Date(), 0);
    if (created.kind !== 'created') throw new Error(created.kind);
    await insertJobDependencies(
      sql,
      on.map((d) => ({ jobId: created.job.id, dependsOn: d.job.id, condition: d.condition })),
    );
    return created.job;
  });
}

async function moveTo(job: JobRecord, state: JobState): Promise<void> {
  const now = await findJob(autocommit(ds), job.id);
  await casUpdateJob(autocommit(ds), job.id, now!.version, { state }, 0, new Date());
}

const depsPending = async (id: string) => Number((await ds.query(`SELECT deps_pending FROM jobs WHERE id = $1`, [id]))[0].deps_pending);

describe('the end-of-job trigger agrees with dependencyStatus', () => {
  const cases = (['succeeded', 'finished'] as const).flatMap((c) =>
    JOB_STATES.filter((s) => s !== 'QUEUED').map((s) => [c, s] as [DependencyCondition, JobState]),
  );
  it.each(cases)('%s, upstream moves to %s', async (condition, state) => {
    const upstream = await makeJob().insert(ds);
    const d = await dependent([{ job: upstream, condition }]);
    expect(d).toMatchObject({ state: 'QUEUED', pendingReason: 'DEPENDENCY' });
    await moveTo(upstream, state);
    const after = (await findJob(autocommit(ds), d.id))!;
    switch (dependencyStatus(condition, state)) {
      case 'waiting':
        expect(after).toMatchObject({ state: 'QUEUED', pendingReason: 'DEPENDENCY' });
        expect(await depsPending(d.id)).toBe(1);
        break;
      case 'met':
        expect(after).toMatchObject({ state: 'QUEUED', pendingReason: null });
        expect(await depsPending(d.id)).toBe(0);
        break;
      case 'impossible': {
        expect(after).toMatchObject({ state: 'FAILED', reason: 'DEPENDENCY_FAILED', lastEventSeq: 2 });
        expect(after.finishedAt).not.toBeNull();
        const events = await listJobEvents(autocommit(ds), d.id, 0, 10);
        expect(events.map((e) => [e.seq, e.type, e.fromState, e.toState])).toEqual([
          [1, 'CREATED', null, 'QUEUED'],
          [2, 'STATE_CHANGED', 'QUEUED', 'FAILED'],
        ]);
        expect(events[1].reason).toBe(`DEPENDENCY_FAILED: job ${upstream.id} ended ${state}`);
        break;
      }
    }
  });
});

describe('dependencies', () => {
  it('a job waiting for two starts only when both are met', async () => {
    const [a, b] = [await makeJob().insert(ds), await makeJob().insert(ds)];
    const d = await dependent([
      { job: a, condition: 'succeeded' },
      { job: b, condition: 'finished' },
    ]);
    expect(await depsPending(d.id)).toBe(2);
    await moveTo(a, 'SUCCEEDED');
    expect(await depsPending(d.id)).toBe(1);
    expect((await findJob(autocommit(ds), d.id))!.pendingReason).toBe('DEPENDENCY');
    await moveTo(b, 'FAILED');
    expect(await depsPending(d.id)).toBe(0);
  });

  it('counts a dependency already met at creation as met', async () => {
    const a = await makeJob().insert(ds);
    await moveTo(a, 'SUCCEEDED');
    const d = await dependent([{ job: a, condition: 'succeeded' }]);
    expect(d.pendingReason).toBeNull();
    expect(await depsPending(d.id)).toBe(0);
  });

  it('a failure propagates down a chain in the same transaction, and a cancelled dependent is left alone', async () => {
    const a = await makeJob().insert(ds);
    const b = await dependent([{ job: a, condition: 'succeeded' }]);
    const c = await dependent([{ job: b, condition: 'succeeded' }]);
    const afterAny = await dependent([{ job: c, condition: 'finished' }]);
    const cancelled = await dependent([{ job: a, condition: 'succeeded' }]);
    await moveTo(cancelled, 'CANCELLED');
    await moveTo(a, 'FAILED');
    for (const j of [b, c]) expect(await findJob(autocommit(ds), j.id)).toMatchObject({ state: 'FAILED', reason: 'DEPENDENCY_FAILED' });
    // C ended (FAILED), which is what "finished" waits for.
    expect(await findJob(autocommit(ds), afterAny.id)).toMatchObject({ state: 'QUEUED', pendingReason: null });
    expect(await findJob(autocommit(ds), cancelled.id)).toMatchObject({ state: 'CANCELLED', reason: null });
  });

  it("the scheduler's queue-head read leaves out a job until its dependencies are met", async () => {
    const queue = uniqueTag('deps').toLowerCase();
    await ds.query(`INSERT INTO queues (name, priority, created_at, updated_at) VALUES ($1, 0, now(), now())`, [queue]);
    const a = await makeJob().queue(queue).insert(ds);
    const d = await dependent([{ job: a, condition: 'succeeded' }], queue);
    const heads = async () => (await loadQueuedJobsPerQueue(autocommit(ds), 1000)).filter((j) => j.queue === queue).map((j) => j.id);
    expect(await heads()).toEqual([a.id]);
    await moveTo(a, 'SUCCEEDED');
    expect(await heads()).toEqual([d.id]);
  });

  /** Waits until some other session is blocked on a row lock running a statement that starts with `prefix`. */
  const blockedOn = (prefix: string) =>
    waitFor(
      `a statement waiting on a row lock: ${prefix}`,
      async () => {
        const [row] = await ds.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND ltrim(query) LIKE $1`,
          [`${prefix}%`],
        );
        return row.n > 0;
      },
      { timeoutMs: 4_000, intervalMs: 20 },
    );

  it('a create that names a job ending under it waits for the end and sees it (no dependency on a stale state)', async () => {
    const a = await makeJob().insert(ds);
    const qr = ds.createQueryRunner();
    await qr.connect();
    await qr.startTransaction();
    await qr.query(`UPDATE jobs SET state = 'FAILED', version = version + 1 WHERE id = $1`, [a.id]);
    const locking = inTransaction(ds, (sql) => lockUpstreamJobs(sql, [a.id]));
    await blockedOn('SELECT id, owner, state FROM jobs WHERE id = ANY');
    await qr.commitTransaction();
    await qr.release();
    expect((await locking)[0].state).toBe('FAILED');
  });

  it('a job ending while a dependent is being created waits for the create, then fails the new dependent', async () => {
    const a = await makeJob().insert(ds);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let dependentId: string | null = null;
    const creating = inTransaction(ds, async (sql) => {
      const upstream = await lockUpstreamJobs(sql, [a.id]);
      expect(upstream[0].state).toBe('QUEUED');
      const [created] = await createJobs(sql, [{ job: { ...makeJob().build(), depsPending: 1 }, idempotency: null }], new Date(), 0);
      if (created.kind !== 'created') throw new Error(created.kind);
      await insertJobDependencies(sql, [{ jobId: created.job.id, dependsOn: a.id, condition: 'succeeded' }]);
      dependentId = created.job.id;
      await held;
    });
    await waitFor('the dependent written, uncommitted', () => dependentId !== null, { timeoutMs: 4_000, intervalMs: 10 });
    const ending = moveTo(a, 'FAILED');
    await blockedOn('UPDATE jobs SET state');
    release();
    await creating;
    await ending;
    expect(await findJob(autocommit(ds), dependentId!)).toMatchObject({ state: 'FAILED', reason: 'DEPENDENCY_FAILED' });
  });
});
