import { DataSource } from 'typeorm';
import { Sql, autocommit, listNodeEvents, nodesDueForDrain, requestNodeDrain, setNodeCordoned, upsertNodeTopology } from '@gantry/persistence';
import { openDataSource, uniqueTag } from '@gantry/testing';

/*
 * The drain's rows (ADR 0027): a drain cordons at once (CORDONED, reason DRAIN, only if it was not
 * cordoned) and is due at its deadline; a second drain keeps the earlier deadline; an uncordon
 * cancels it and a later cordon does not bring it back.
 */

let ds: DataSource;
beforeAll(async () => (ds = await openDataSource()));
afterAll(async () => ds.destroy());

const T0 = new Date('2030-01-01T00:00:00Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);

async function node(): Promise<string> {
  const id = `drain-${uniqueTag()}`;
  await upsertNodeTopology(
    autocommit(ds),
    [
      {
        id,
        zone: 'z',
        rack: 'r',
        gpuModel: 'H100',
        gpusTotal: 8,
        gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7],
        address: null,
        logsPort: null,
        cpuCores: 96,
        memoryMiB: 1024,
      },
    ],
    T0,
  );
  return id;
}
const due = async (id: string, when: Date) => (await nodesDueForDrain(autocommit(ds), when)).includes(id);
const events = async (id: string) => (await listNodeEvents(autocommit(ds), id, 0, 100)).map((e) => [e.type, e.reason ?? null]);

describe('node drain rows', () => {
  it('cordons at once and is due at its deadline; draining again keeps the earlier deadline', async () => {
    const id = await node();
    expect(await requestNodeDrain(autocommit(ds), id, at(60), T0)).toMatchObject({ id, cordoned: true, drainDeadline: at(60) });
    expect(await due(id, at(59))).toBe(false);
    expect(await due(id, at(60))).toBe(true);
    expect((await requestNodeDrain(autocommit(ds), id, at(600), at(1)))!.drainDeadline).toEqual(at(60));
    expect(await due(id, at(60))).toBe(true);
    // Only the first drain cordoned it: one CORDONED event.
    expect(await events(id)).toEqual([['CORDONED', 'DRAIN']]);
  });

  it('an uncordon cancels the drain, and a cordon afterwards does not bring it back', async () => {
    const id = await node();
    await requestNodeDrain(autocommit(ds), id, at(60), T0);
    expect((await setNodeCordoned(autocommit(ds), id, false, at(1)))!.drainDeadline).toBeNull();
    expect(await due(id, at(3600))).toBe(false);
    await setNodeCordoned(autocommit(ds), id, true, at(2));
    expect(await due(id, at(3600))).toBe(false);
    expect(await events(id)).toEqual([
      ['CORDONED', 'DRAIN'],
      ['UNCORDONED', null],
      ['CORDONED', null],
    ]);
  });

  it('a drain of a node already cordoned records no second CORDONED, and a cordon keeps a pending drain', async () => {
    const id = await node();
    await setNodeCordoned(autocommit(ds), id, true, T0);
    await requestNodeDrain(autocommit(ds), id, at(60), at(1));
    await setNodeCordoned(autocommit(ds), id, true, at(2));
    expect(await due(id, at(60))).toBe(true);
    expect(await events(id)).toEqual([['CORDONED', null]]);
  });

  it('a cordon whose update could not see the node yet (its registration committed just after) still cordons it', async () => {
    const id = `drain-${uniqueTag()}`;
    const registering = ds.createQueryRunner();
    await registering.connect();
    await registering.startTransaction();
    await registering.query(
      `INSERT INTO nodes (id, zone, rack, gpu_model, gpus_total, cpu_cores, memory_mib, gpu_indices, first_seen_at, updated_at)
       VALUES ($1, 'z', 'r', 'H100', 8, 96, 1024, '{0,1,2,3,4,5,6,7}', $2, $2)`,
      [id, T0],
    );
    // The registration commits right after the cordon's first statement, before anything else it runs.
    const base = autocommit(ds);
    let statements = 0;
    const racing: Sql = {
      rows: async (q, p) => {
        const rows = await base.rows(q, p);
        if (++statements === 1) await registering.commitTransaction();
        return rows as never;
      },
      afterCommit: base.afterCommit,
    };
    try {
      expect(await setNodeCordoned(racing, id, true, at(1))).toMatchObject({ id, cordoned: true });
    } finally {
      await registering.release();
    }
    expect(await events(id)).toEqual([['CORDONED', null]]);
  });

  it('an unknown node: null', async () => {
    expect(await requestNodeDrain(autocommit(ds), `drain-${uniqueTag()}-none`, at(60), T0)).toBeNull();
  });
});
