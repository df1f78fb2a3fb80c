import { DataSource } from 'typeorm';
import {
  JobRecord,
  autocommit,
  deleteJobsFinishedBefore,
  cancelArrayChildren,
  casUpdateJob,
  countActiveArrayChildren,
  countArrayChildren,
  createJobs,
  findJob,
  inTransaction,
  insertArrayChildren,
  listJobEvents,
  sortedChildIds,
  listJobsPage,
  loadQueuedJobsPerQueue,
} from '@gantry/persistence';
import { makeJob, openDataSource, uniqueTag } from '@gantry/testing';

/*
 * The SQL of job arrays (ADR 0025): the children written from the parent in one statement, in index
 * order, with their CREATED events, and nothing of either when the transaction does not commit; the
 * scheduler's read never sees the parent; counts by state and the running count; the children's
 * listing; the parent's cancel reaching every child, each row judged as it is.
 */

let ds: DataSource;
let queue: string;
beforeAll(async () => {
  ds = await openDataSource();
  queue = uniqueTag('arrays').toLowerCase();
  await ds.query(`INSERT INTO queues (name, priority, created_at, updated_at) VALUES ($1, 0, now(), now())`, [queue]);
});
afterAll(async () => ds.destroy());

async function array(size: number, parallelism: number | null = null): Promise<JobRecord> {
  return inTransaction(ds, async (sql) => {
    const [created] = await createJobs(
      sql,
      [{ job: { ...makeJob().queue(queue).build(), arraySize: size, arrayParallelism: parallelism }, idempotency: null }],
      new Date(),
      0,
    );
    if (created.kind !== 'created') throw new Error(created.kind);
    expect(await insertArrayChildren(sql, created.job.id, sortedChildIds(size))).toBe(size);
    return created.job;
  });
}

const childrenOf = async (parent: JobRecord) => listJobsPage(autocommit(ds), { arrayOf: parent.id }, null, 500);

async function moveTo(id: string, state: JobRecord['state']): Promise<void> {
  const now = await findJob(autocommit(ds), id);
  await casUpdateJob(autocommit(ds), id, now!.version, { state }, 0, new Date());
}

describe('job arrays in SQL', () => {
  it('writes every child from the parent, in index order, each with its CREATED event, copying the spec and the cap', async () => {
    const parent = await array(50, 7);
    const kids = await childrenOf(parent);
    expect(kids.map((k) => k.arrayIndex)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    for (const k of kids) {
      expect(k).toMatchObject({
        arrayOf: parent.id,
        arrayParallelism: 7,
        arraySize: null,
        state: 'QUEUED',
        queue,
        command: parent.command,
        env: parent.env,
        owner: parent.owner,
        lastEventSeq: 1,
      });
      expect(k.createdAt.getTime()).toBe(parent.createdAt.getTime());
    }
    expect((await listJobEvents(autocommit(ds), kids[49].id, 0, 10)).map((e) => [e.seq, e.type, e.toState])).toEqual([[1, 'CREATED', 'QUEUED']]);
  });

  it("pages through the children by index with a cursor in milliseconds (every child shares the parent's createdAt)", async () => {
    const parent = await array(25);
    const seen: number[] = [];
    let after: { createdAt: Date; id: string } | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page = await listJobsPage(autocommit(ds), { arrayOf: parent.id }, after, 7);
      if (page.length === 0) break;
      seen.push(...page.map((k) => k.arrayIndex!));
      const last = page[page.length - 1];
      after = { createdAt: new Date(last.createdAt.getTime()), id: last.id };
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('writes no child when the ids do not match the size', async () => {
    const parent = await inTransaction(ds, async (sql) => {
      const [created] = await createJobs(sql, [{ job: { ...makeJob().queue(queue).build(), arraySize: 3 }, idempotency: null }], new Date(), 0);
      const job = (created as { job: JobRecord }).job;
      expect(await insertArrayChildren(sql, job.id, sortedChildIds(2))).toBe(0);
      return job;
    });
    expect(await childrenOf(parent)).toHaveLength(0);
  });

  it('leaves neither parent nor children when the transaction does not commit', async () => {
    let parentId = '';
    await expect(
      inTransaction(ds, async (sql) => {
        const [created] = await createJobs(sql, [{ job: { ...makeJob().queue(queue).build(), arraySize: 10 }, idempotency: null }], new Date(), 0);
        parentId = (created as { job: JobRecord }).job.id;
        await insertArrayChildren(sql, parentId, sortedChildIds(10));
        throw new Error('crash before the commit');
      }),
    ).rejects.toThrow('crash before the commit');
    expect(await findJob(autocommit(ds), parentId)).toBeNull();
    expect(Number((await ds.query(`SELECT count(*) FROM jobs WHERE array_of = $1`, [parentId]))[0].count)).toBe(0);
  });

  it("the scheduler's queue-head read returns the children, never the parent", async () => {
    const parent = await array(3);
    const heads = (await loadQueuedJobsPerQueue(autocommit(ds), 1000)).filter((j) => j.queue === queue).map((j) => j.id);
    expect(heads).not.toContain(parent.id);
    expect(heads).toEqual(expect.arrayContaining((await childrenOf(parent)).map((k) => k.id)));
  });

  it('counts children by state, and those placed per array', async () => {
    const parent = await array(6, 2);
    const kids = await childrenOf(parent);
    await moveTo(kids[0].id, 'SCHEDULED');
    await moveTo(kids[1].id, 'RUNNING');
    await moveTo(kids[2].id, 'SUCCEEDED');
    expect((await countArrayChildren(autocommit(ds), [parent.id])).get(parent.id)).toEqual({
      QUEUED: 3,
      SCHEDULED: 1,
      RUNNING: 1,
      SUCCEEDED: 1,
      FAILED: 0,
      CANCELLED: 0,
    });
    expect((await countActiveArrayChildren(autocommit(ds), [parent.id, kids[0].id])).get(parent.id)).toBe(2);
  });

  it('cancels every child not ended: queued ones end CANCELLED with both events, placed ones are marked, ended ones are left', async () => {
    const parent = await array(4);
    const kids = await childrenOf(parent);
    await moveTo(kids[1].id, 'RUNNING');
    await moveTo(kids[2].id, 'SUCCEEDED');
    const { ended } = await inTransaction(ds, (sql) => cancelArrayChildren(sql, parent.id, new Date()));
    expect(ended).toBe(2);
    const after = await childrenOf(parent);
    expect(after.map((k) => [k.state, k.cancelRequested])).toEqual([
      ['CANCELLED', true],
      ['RUNNING', true],
      ['SUCCEEDED', false],
      ['CANCELLED', true],
    ]);
    expect((await listJobEvents(autocommit(ds), kids[0].id, 0, 10)).map((e) => [e.seq, e.type, e.toState ?? null])).toEqual([
      [1, 'CREATED', 'QUEUED'],
      [2, 'CANCEL_REQUESTED', null],
      [3, 'STATE_CHANGED', 'CANCELLED'],
    ]);
    expect((await listJobEvents(autocommit(ds), kids[1].id, 0, 10)).map((e) => e.type)).toEqual(['CREATED', 'CANCEL_REQUESTED']);
    // A second cancel changes nothing.
    expect((await inTransaction(ds, (sql) => cancelArrayChildren(sql, parent.id, new Date()))).ended).toBe(0);
  });

  it('retention takes the children before their parent (whose FK would take them without their events)', async () => {
    const parent = await array(3);
    // Long ago, so that this cutoff takes no other suite's jobs.
    await ds.query(`UPDATE jobs SET state = 'SUCCEEDED', finished_at = '2000-01-01' WHERE id = $1 OR array_of = $1`, [parent.id]);
    const cutoff = new Date('2000-01-02');
    expect(await deleteJobsFinishedBefore(autocommit(ds), cutoff, 100, new Date())).toBe(3);
    expect(await findJob(autocommit(ds), parent.id)).not.toBeNull();
    expect(await deleteJobsFinishedBefore(autocommit(ds), cutoff, 100, new Date())).toBe(1);
    expect(await findJob(autocommit(ds), parent.id)).toBeNull();
  });
});
