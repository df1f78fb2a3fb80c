import { DataSource } from 'typeorm';
import { autocommit, findJob, insertQueue } from '@gantry/persistence';
import { makeJob, makeNode, uniqueTag } from '@gantry/testing';
import { useSchedulerFixture } from './scheduler-fixture';

/* Decayed fair share in the real scheduler (contract 5.4, ADR 0038): real Postgres and Redis, the cycle as the service builds it. */

const fixture = useSchedulerFixture();
let ds: DataSource;
beforeAll(() => {
  ds = fixture.ds;
});

/** A decayed usage row as the usage ledger writes it for ranks that have ended. */
const pastUsage = (queue: string, owner: string, gpuSeconds: number) =>
  ds.query(`INSERT INTO fair_share_usage (queue, owner, gpu_seconds, as_of) VALUES ($1, $2, $3, now())`, [queue, owner, gpuSeconds]);

/** A band of two fresh queues of weight 1 each. */
async function twoQueues(priority: number): Promise<[string, string]> {
  const names: [string, string] = [uniqueTag('used'), uniqueTag('fresh')];
  for (const name of names) await insertQueue(autocommit(ds), { name, priority, quotaGpus: null }, new Date());
  return names;
}

const states = async (ids: string[]) => Promise.all(ids.map(async (id) => (await findJob(autocommit(ds), id))!.state));
const scheduled = async (ids: string[]) => (await states(ids)).filter((s) => s === 'SCHEDULED').length;

describe('decayed fair share', () => {
  it.each([
    ['decayed', 0, 4],
    ['drf', 2, 2],
  ] as const)(
    '%s: of two equal queues, the one with large past usage gets %d of 4 scarce GPUs, the other %d, though its jobs are older',
    async (fairness, usedGets, freshGets) => {
      const model = uniqueTag('GPU');
      const node = await makeNode().gpus(4, model).insert(ds);
      await fixture.heard([node.id]);
      const [used, fresh] = await twoQueues(41);
      await pastUsage(used, 'test', 50_000_000);
      const old = [];
      for (let i = 0; i < 4; i++) old.push((await makeJob().gpus(1).model(model).queue(used).insert(ds)).id);
      const young = [];
      for (let i = 0; i < 4; i++) young.push((await makeJob().gpus(1).model(model).queue(fresh).insert(ds)).id);
      await fixture.cycle({ GANTRY_SCHEDULER_BATCH: 1000, GANTRY_SCHEDULER_FAIRNESS: fairness }).run();
      expect([await scheduled(old), await scheduled(young)]).toEqual([usedGets, freshGets]);
    },
  );

  it('counts running ranks by how long they have held their GPUs: the queue that placed long ago waits', async () => {
    const model = uniqueTag('GPU');
    const busy = await makeNode().gpus(8, model).insert(ds);
    await fixture.heard([busy.id]);
    const [used, fresh] = await twoQueues(42);
    // Each queue holds 4 GPUs now (equal for DRF); the used queue's have been held for ten half-lives.
    const longRunning = await makeJob().gpus(4).model(model).queue(used).insert(ds);
    const justPlaced = await makeJob().gpus(4).model(model).queue(fresh).insert(ds);
    const cycle = () => fixture.cycle({ GANTRY_SCHEDULER_BATCH: 1000, GANTRY_FAIRSHARE_HALF_LIFE_HOURS: 1 });
    await cycle().run();
    expect(await states([longRunning.id, justPlaced.id])).toEqual(['SCHEDULED', 'SCHEDULED']);
    await ds.query(`UPDATE attempt_nodes SET created_at = now() - interval '10 hours' WHERE job_id = $1`, [longRunning.id]);

    const spare = await makeNode().gpus(2, model).insert(ds);
    await fixture.heard([spare.id]);
    const old = [(await makeJob().gpus(1).model(model).queue(used).insert(ds)).id, (await makeJob().gpus(1).model(model).queue(used).insert(ds)).id];
    const young = [(await makeJob().gpus(1).model(model).queue(fresh).insert(ds)).id, (await makeJob().gpus(1).model(model).queue(fresh).insert(ds)).id];
    await cycle().run();
    expect([await scheduled(old), await scheduled(young)]).toEqual([0, 2]);
  });

  it('inside a queue, serves the owner with less past usage first', async () => {
    const model = uniqueTag('GPU');
    const node = await makeNode().gpus(2, model).insert(ds);
    await fixture.heard([node.id]);
    const queue = uniqueTag('shared');
    await insertQueue(autocommit(ds), { name: queue, priority: 43, quotaGpus: null }, new Date());
    const [heavy, light] = [uniqueTag('heavy'), uniqueTag('light')];
    await pastUsage(queue, heavy, 10_000_000);
    const old = [
      (await makeJob().gpus(1).model(model).queue(queue).owner(heavy).insert(ds)).id,
      (await makeJob().gpus(1).model(model).queue(queue).owner(heavy).insert(ds)).id,
    ];
    const young = [
      (await makeJob().gpus(1).model(model).queue(queue).owner(light).insert(ds)).id,
      (await makeJob().gpus(1).model(model).queue(queue).owner(light).insert(ds)).id,
    ];
    await fixture.cycle({ GANTRY_SCHEDULER_BATCH: 1000 }).run();
    expect([await scheduled(old), await scheduled(young)]).toEqual([0, 2]);
  });
});
