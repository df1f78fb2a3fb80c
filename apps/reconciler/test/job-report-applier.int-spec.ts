import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { JobReportMessage, TOPICS } from '@gantry/contracts';
import { JobRecord, autocommit, findJob, listJobEvents, loadNodes } from '@gantry/persistence';
import { WakeUpSender } from '@gantry/messaging';
import { makeJob, makeNode, openDataSource, placeJob, testWakeUpSender } from '@gantry/testing';
import { ReconcilerEnv } from '../src/config';
import { JobReportApplier } from '../src/job-report-applier';

let ds: DataSource;
let applier: JobReportApplier;
let wake: { sender: WakeUpSender; close: () => Promise<void> };
beforeAll(async () => {
  ds = await openDataSource();
  wake = await testWakeUpSender('job-report-applier-test');
  applier = new JobReportApplier(ds, wake.sender, new ReconcilerEnv());
});
afterAll(async () => {
  await wake.close();
  await ds.destroy();
});

/** A job placed (attempt 1) on fresh nodes, as the scheduler would leave it. */
async function placedJob(nodes = 1, gpus = 2): Promise<{ job: JobRecord; nodeIds: string[] }> {
  const nodeIds: string[] = [];
  for (let i = 0; i < nodes; i++) nodeIds.push((await makeNode().gpus(8).insert(ds)).id);
  const job = await makeJob().gpus(gpus).gang(nodes).insert(ds);
  await placeJob(ds, job, nodeIds);
  return { job: (await findJob(autocommit(ds), job.id))!, nodeIds };
}

const report = (job: JobRecord, nodeId: string, state: JobReportMessage['state'], over: Partial<JobReportMessage> = {}): JobReportMessage =>
  ({ nodeId, jobId: job.id, attempt: 1, state, at: Date.now(), ...over }) as JobReportMessage;

async function outboxFor(jobId: string) {
  return (await ds.query(`SELECT topic, value FROM outbox WHERE value::jsonb->>'jobId' = $1 ORDER BY id`, [jobId])) as Array<{ topic: string; value: string }>;
}

describe('JobReportApplier', () => {
  it('drives a job RUNNING then SUCCEEDED, one event per change, and frees its capacity once', async () => {
    const { job, nodeIds } = await placedJob();
    expect(await applier.apply(report(job, nodeIds[0], 'RUNNING'))).toBe('applied');
    expect(await applier.apply(report(job, nodeIds[0], 'RUNNING'))).toBe('noop');
    expect(await applier.apply(report(job, nodeIds[0], 'SUCCEEDED', { exitCode: 0 }))).toBe('applied');
    expect(await applier.apply(report(job, nodeIds[0], 'SUCCEEDED', { exitCode: 0 }))).toBe('noop');
    const after = (await findJob(autocommit(ds), job.id))!;
    expect(after).toMatchObject({ state: 'SUCCEEDED', exitCode: 0 });
    expect(after.startedAt).not.toBeNull();
    expect(after.finishedAt).not.toBeNull();
    const [node] = await loadNodes(autocommit(ds), nodeIds);
    expect([node.gpusAllocated, node.gpusHeld]).toEqual([0, []]);
    const events = await listJobEvents(autocommit(ds), job.id, 0, 50);
    expect(events.filter((e) => e.type === 'STATE_CHANGED').map((e) => `${e.fromState}>${e.toState}`)).toEqual([
      'QUEUED>SCHEDULED',
      'SCHEDULED>RUNNING',
      'RUNNING>SUCCEEDED',
    ]);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it('applies a batch in order in one write; a report the database refuses is returned, the others stand', async () => {
    const [a, b] = [await placedJob(), await placedJob()];
    const results = await applier.applyBatch([
      { value: report(a.job, a.nodeIds[0], 'RUNNING') },
      { value: report(b.job, b.nodeIds[0], 'SUCCEEDED', { exitCode: 2 ** 40 }) }, // exit_code is int4: a data error
      { value: report(a.job, a.nodeIds[0], 'SUCCEEDED', { exitCode: 0 }) },
      { value: report(b.job, b.nodeIds[0], 'RUNNING') },
    ]);
    expect(
      results.map((r) =>
        'outcome' in r ? r.outcome : `error:${(r.error as { code?: string }).code ?? (r.error as { driverError?: { code?: string } }).driverError?.code}`,
      ),
    ).toEqual(['applied', 'error:22003', 'applied', 'applied']);
    expect(await findJob(autocommit(ds), a.job.id)).toMatchObject({ state: 'SUCCEEDED', exitCode: 0, lastEventSeq: 4 });
    // The refused report left nothing behind: b went on from where it was, to RUNNING.
    expect(await findJob(autocommit(ds), b.job.id)).toMatchObject({ state: 'RUNNING', exitCode: null, lastEventSeq: 3 });
    expect((await loadNodes(autocommit(ds), b.nodeIds))[0].gpusAllocated).toBe(2);
  });

  it('one batch carrying a job from SCHEDULED to SUCCEEDED writes every change once, and one wake-up', async () => {
    const [a, b] = [await placedJob(), await placedJob()];
    const wakesBefore = wake.sender.signalled;
    const results = await applier.applyBatch([
      { value: report(a.job, a.nodeIds[0], 'RUNNING') },
      { value: report(b.job, b.nodeIds[0], 'RUNNING') },
      { value: report(a.job, a.nodeIds[0], 'SUCCEEDED', { exitCode: 0 }) },
      { value: report(a.job, a.nodeIds[0], 'SUCCEEDED', { exitCode: 0 }) },
      { value: report(b.job, b.nodeIds[0], 'FAILED', { exitCode: 4 }) },
    ]);
    expect(results).toEqual(['applied', 'applied', 'applied', 'noop', 'applied'].map((outcome) => ({ outcome })));
    expect(await findJob(autocommit(ds), a.job.id)).toMatchObject({ state: 'SUCCEEDED', exitCode: 0, lastEventSeq: 4, version: a.job.version + 1 });
    expect(await findJob(autocommit(ds), b.job.id)).toMatchObject({ state: 'FAILED', exitCode: 4, reason: 'EXIT_CODE_4', lastEventSeq: 4 });
    const events = await listJobEvents(autocommit(ds), a.job.id, 0, 50);
    expect(events.map((e) => `${e.seq}:${e.fromState ?? ''}>${e.toState}`)).toEqual([
      '1:>QUEUED',
      '2:QUEUED>SCHEDULED',
      '3:SCHEDULED>RUNNING',
      '4:RUNNING>SUCCEEDED',
    ]);
    expect((await loadNodes(autocommit(ds), [...a.nodeIds, ...b.nodeIds])).map((n) => n.gpusAllocated)).toEqual([0, 0]);
    expect(wake.sender.signalled - wakesBefore).toBe(1);
  });

  it('a report for a job that does not exist is an orphan: KILLed if it runs', async () => {
    const jobId = randomUUID();
    expect(await applier.applyBatch([{ value: { nodeId: 'n-orphan', jobId, attempt: 1, state: 'RUNNING', at: 1 } as JobReportMessage }])).toEqual([
      { outcome: 'unknown-job' },
    ]);
    expect((await outboxFor(jobId)).map((o) => JSON.parse(o.value))).toEqual([
      expect.objectContaining({ type: 'KILL', nodeId: 'n-orphan', reason: 'UNKNOWN_JOB' }),
    ]);
  });

  it('records a failing exit code', async () => {
    const { job, nodeIds } = await placedJob();
    await applier.apply(report(job, nodeIds[0], 'FAILED', { exitCode: 3 }));
    expect(await findJob(autocommit(ds), job.id)).toMatchObject({ state: 'FAILED', exitCode: 3, reason: 'EXIT_CODE_3' });
  });

  it('terminal absorbs: a later RUNNING is rejected, recorded, and changes nothing', async () => {
    const { job, nodeIds } = await placedJob();
    await applier.apply(report(job, nodeIds[0], 'SUCCEEDED', { exitCode: 0 }));
    expect(await applier.apply(report(job, nodeIds[0], 'FAILED', { exitCode: 1 }))).toBe('rejected');
    const after = (await findJob(autocommit(ds), job.id))!;
    expect(after).toMatchObject({ state: 'SUCCEEDED', exitCode: 0 });
    const events = await listJobEvents(autocommit(ds), job.id, 0, 50);
    expect(events[events.length - 1]).toMatchObject({ type: 'REPORT_REJECTED' });
  });

  it('fences by attempt: a RUNNING report for another attempt changes nothing and is answered with KILL', async () => {
    const { job, nodeIds } = await placedJob();
    expect(await applier.apply(report(job, nodeIds[0], 'RUNNING', { attempt: 7 }))).toBe('stale');
    expect((await findJob(autocommit(ds), job.id))!.state).toBe('SCHEDULED');
    const out = await outboxFor(job.id);
    expect(out.map((o) => [o.topic, JSON.parse(o.value).type, JSON.parse(o.value).attempt])).toContainEqual([TOPICS.agentCommands, 'KILL', 7]);
  });

  it('a gang succeeds only when every rank succeeds', async () => {
    const { job, nodeIds } = await placedJob(2);
    await applier.apply(report(job, nodeIds[0], 'SUCCEEDED', { exitCode: 0 }));
    expect((await findJob(autocommit(ds), job.id))!.state).toBe('RUNNING');
    await applier.apply(report(job, nodeIds[1], 'SUCCEEDED', { exitCode: 0 }));
    expect((await findJob(autocommit(ds), job.id))!.state).toBe('SUCCEEDED');
    expect((await loadNodes(autocommit(ds), nodeIds)).map((n) => [n.gpusAllocated, n.gpusHeld])).toEqual([
      [0, []],
      [0, []],
    ]);
  });

  it('a gang fails as a whole when one rank fails, and the other rank is killed', async () => {
    const { job, nodeIds } = await placedJob(2);
    await applier.apply(report(job, nodeIds[0], 'RUNNING'));
    await applier.apply(report(job, nodeIds[1], 'RUNNING'));
    await applier.apply(report(job, nodeIds[1], 'FAILED', { exitCode: 2 }));
    expect((await findJob(autocommit(ds), job.id))!.state).toBe('FAILED');
    const kills = (await outboxFor(job.id)).map((o) => JSON.parse(o.value)).filter((v) => v.type === 'KILL');
    expect(kills).toEqual([expect.objectContaining({ nodeId: nodeIds[0], attempt: 1, reason: 'GANG_ENDED' })]);
    // The killed rank's own end frees its capacity later.
    await applier.apply(report(job, nodeIds[0], 'CANCELLED'));
    expect((await loadNodes(autocommit(ds), nodeIds)).map((n) => n.gpusAllocated)).toEqual([0, 0]);
  });

  it('concurrent reports for one job do not lose updates, in one replica or across replicas', async () => {
    const { job, nodeIds } = await placedJob(4);
    // Two appliers are two reconciler replicas: their writes race on the job's compare-and-set.
    const other = new JobReportApplier(ds, wake.sender, new ReconcilerEnv());
    await Promise.all(nodeIds.map((n, i) => (i % 2 ? other : applier).apply(report(job, n, 'SUCCEEDED', { exitCode: 0 }))));
    expect((await findJob(autocommit(ds), job.id))!.state).toBe('SUCCEEDED');
    const seqs = (await listJobEvents(autocommit(ds), job.id, 0, 50)).map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });
});
