import { autocommit, findJob, insertQueue } from '@gantry/persistence';
import { makeJob, makeNode, uniqueTag } from '@gantry/testing';
import { SchedulerEnv } from '../src/config';
import { useSchedulerFixture } from './scheduler-fixture';

const fixture = useSchedulerFixture();
const job = (id: string) => findJob(autocommit(fixture.ds), id);

afterEach(async () => {
  // What a test leaves queued must not take the next one's reservation.
  await fixture.ds.query(`UPDATE jobs SET state = 'CANCELLED' WHERE state = 'QUEUED'`);
});

/**
 * A node of 8 GPUs, 4 held by a running job that started 100 s ago (with `maxRuntimeSeconds`, if
 * given), in a queue of its own above everything else left in the database: its jobs are the first
 * in policy order, so its head holds the cycle's one reservation.
 */
async function busyNode(maxRuntimeSeconds: number | null) {
  const model = uniqueTag('GPU');
  const queue = uniqueTag('bf');
  await insertQueue(autocommit(fixture.ds), { name: queue, priority: 90, quotaGpus: null }, new Date());
  const node = await makeNode().gpus(8, model).insert(fixture.ds);
  await fixture.heard([node.id]);
  const builder = makeJob().gpus(4).model(model).queue(queue);
  const running = await (maxRuntimeSeconds === null ? builder : builder.maxRuntime(maxRuntimeSeconds)).insert(fixture.ds);
  await fixture.cycle().run();
  expect((await job(running.id))!.state).toBe('SCHEDULED');
  // As the agent's report of its start writes it (job-report-writes), 100 s in the past.
  await fixture.ds.query(`UPDATE jobs SET state = 'RUNNING', started_at = now() - interval '100 seconds' WHERE id = $1`, [running.id]);
  return { model, queue, node };
}

/** The head (the whole node), then a short job, a long one and one without a limit, 2 GPUs each, in that order. */
async function queueBehindHead(model: string, queue: string) {
  const head = await makeJob().gpus(8).model(model).queue(queue).insert(fixture.ds);
  const short = await makeJob().gpus(2).model(model).queue(queue).maxRuntime(60).insert(fixture.ds);
  const long = await makeJob().gpus(2).model(model).queue(queue).maxRuntime(3600).insert(fixture.ds);
  const unlimited = await makeJob().gpus(2).model(model).queue(queue).insert(fixture.ds);
  return { head, short, long, unlimited };
}

/** Cycles of one scheduler with runtime backfill unless told otherwise: the first to reserve reads the reserved node's ranks for the cycles after it. */
async function cycles(n: number, settings: Partial<SchedulerEnv> = {}) {
  const cycle = fixture.cycle({ GANTRY_SCHEDULER_BACKFILL: 'runtime', ...settings });
  for (let i = 0; i < n; i++) await cycle.run();
}

describe('runtime-aware backfill', () => {
  it('starts a short job on the reserved node; a long one, and one without maxRuntimeSeconds, wait with BACKFILL_WINDOW', async () => {
    // The running job ends 500 s from now: the head's estimated start.
    const { model, queue, node } = await busyNode(600);
    const { head, short, long, unlimited } = await queueBehindHead(model, queue);
    await cycles(3);
    expect(await job(short.id)).toMatchObject({ state: 'SCHEDULED', nodeIds: [node.id] });
    expect(await job(head.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'INSUFFICIENT_CAPACITY:gpus' });
    expect(await job(long.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'BACKFILL_WINDOW' });
    expect(await job(unlimited.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'BACKFILL_WINDOW' });
  });

  it('keeps every job off the reserved node when the work there has no maxRuntimeSeconds', async () => {
    const { model, queue } = await busyNode(null);
    const { head, short, long } = await queueBehindHead(model, queue);
    await cycles(3);
    expect(await job(head.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'INSUFFICIENT_CAPACITY:gpus' });
    expect(await job(short.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'INSUFFICIENT_CAPACITY:gpus' });
    expect(await job(long.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'INSUFFICIENT_CAPACITY:gpus' });
  });

  it('with GANTRY_SCHEDULER_BACKFILL=strict, lets no job onto the reserved node', async () => {
    const { model, queue } = await busyNode(600);
    const { short, long } = await queueBehindHead(model, queue);
    await cycles(3, { GANTRY_SCHEDULER_BACKFILL: 'strict' });
    expect(await job(short.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'INSUFFICIENT_CAPACITY:gpus' });
    expect(await job(long.id)).toMatchObject({ state: 'QUEUED', pendingReason: 'INSUFFICIENT_CAPACITY:gpus' });
  });
});
