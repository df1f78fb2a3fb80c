import { DataSource } from 'typeorm';
import { NodeInventory, NodeTopology } from '@gantry/domain';
import { waitFor } from '@gantry/stack';
import {
  Sql,
  autocommit,
  declareInventories,
  enrollNodes,
  inTransaction,
  listNodeEvents,
  loadNodes,
  recordReportedTopology,
  recordStartFailures,
  setNodeCordoned,
} from '@gantry/persistence';
import { openDataSource, uniqueTag } from '@gantry/testing';

/*
 * A node is trusted for what was declared (ADR 0035), in the rows: the pinned inventory on the
 * enrollment, the report and the believed capacity on the node; start failures in a row and the
 * START_FAILURES cordon.
 */

let ds: DataSource;
beforeAll(async () => (ds = await openDataSource()));
afterAll(async () => ds.destroy());

const T0 = new Date('2030-01-01T00:00:00Z');

const report = (id: string, over: Partial<NodeTopology> = {}): NodeTopology => ({
  id,
  zone: 'z',
  rack: 'r',
  gpuModel: 'H100',
  gpusTotal: 8,
  gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7],
  address: '10.0.0.7',
  logsPort: 9250,
  cpuCores: 96,
  memoryMiB: 1024,
  ...over,
});
const inventory = (over: Partial<NodeInventory> = {}): NodeInventory => ({
  gpus: { model: 'H100', count: 2 },
  cpuCores: 16,
  memoryMiB: 512,
  address: '10.0.0.7',
  ...over,
});

async function enrolled(declared: NodeInventory | null = null): Promise<string> {
  const id = `inv-${uniqueTag()}`;
  await inTransaction(ds, async (sql) => {
    await enrollNodes(sql, [id], T0);
    if (declared) await declareInventories(sql, [{ nodeId: id, inventory: declared }], T0);
  });
  return id;
}
const node = async (id: string) => (await loadNodes(autocommit(ds), [id]))[0];

describe('declared inventories', () => {
  it('a node enrolled without one pins its first report, and is believed no further after', async () => {
    const id = await enrolled();
    expect(await recordReportedTopology(ds, [report(id)], T0)).toEqual([{ nodeId: id, exceeded: [] }]);
    expect(await node(id)).toMatchObject({
      gpusTotal: 8,
      cpuCores: 96,
      declared: { gpus: { model: 'H100', count: 8 }, cpuCores: 96, memoryMiB: 1024, address: '10.0.0.7' },
    });

    const more = report(id, { gpusTotal: 16, gpuIndices: [...Array(16).keys()], cpuCores: 512, address: '169.254.169.254' });
    expect(await recordReportedTopology(ds, [more], T0)).toEqual([{ nodeId: id, exceeded: ['gpus', 'cpuCores', 'address'] }]);
    expect(await node(id)).toMatchObject({
      gpusTotal: 8,
      gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7],
      cpuCores: 96,
      address: '10.0.0.7',
      reported: { cpuCores: 512, address: '169.254.169.254' },
    });
  });

  it('a declared inventory caps what is believed from the first report on', async () => {
    const id = await enrolled(inventory());
    expect(await recordReportedTopology(ds, [report(id)], T0)).toEqual([{ nodeId: id, exceeded: ['gpus', 'cpuCores', 'memoryMiB'] }]);
    expect(await node(id)).toMatchObject({ gpusTotal: 2, gpuIndices: [0, 1], cpuCores: 16, memoryMiB: 512, declared: inventory() });
  });

  it('a declaration changes what is believed at once, with a new version (no plan made before can commit)', async () => {
    const id = await enrolled(inventory());
    await recordReportedTopology(ds, [report(id)], T0);
    const before = await node(id);
    await inTransaction(ds, (sql) => declareInventories(sql, [{ nodeId: id, inventory: inventory({ gpus: { model: 'H100', count: 6 }, cpuCores: 200 }) }], T0));
    const after = await node(id);
    expect(after).toMatchObject({ gpusTotal: 6, gpuIndices: [0, 1, 2, 3, 4, 5], cpuCores: 96, declared: { gpus: { model: 'H100', count: 6 }, cpuCores: 200 } });
    expect(after.version).toBeGreaterThan(before.version);
  });

  it('a declaration without an address pins the one the node reported', async () => {
    const id = await enrolled();
    await recordReportedTopology(ds, [report(id)], T0);
    await inTransaction(ds, (sql) => declareInventories(sql, [{ nodeId: id, inventory: inventory({ address: null }) }], T0));
    expect((await node(id)).declared!.address).toBe('10.0.0.7');
  });

  it('a report that comes while a declaration is being written waits for it, and believes the lesser of the two it ends with', async () => {
    const id = await enrolled(inventory({ gpus: { model: 'H100', count: 8 } }));
    await recordReportedTopology(ds, [report(id)], T0);
    // A declaration in flight: written, not yet committed.
    const declaring = ds.createQueryRunner();
    await declaring.connect();
    await declaring.startTransaction();
    try {
      const sql: Sql = { rows: async (q, params) => declaring.query(typeof q === 'string' ? q : q.text, params), afterCommit: () => undefined };
      await declareInventories(sql, [{ nodeId: id, inventory: inventory({ gpus: { model: 'H100', count: 3 } }) }], T0);
      const reported = recordReportedTopology(ds, [report(id, { gpusTotal: 4, gpuIndices: [0, 1, 2, 3] })], T0);
      // The report waits on the declaration's locks (it must: what it reads as pinned would be old otherwise).
      await waitFor(
        'the report waiting on a lock',
        async () =>
          (await ds.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%node%'`)).length > 0,
        { timeoutMs: 10_000 },
      );
      await declaring.commitTransaction();
      await reported;
    } finally {
      if (declaring.isTransactionActive) await declaring.rollbackTransaction();
      await declaring.release();
    }
    expect(await node(id)).toMatchObject({ gpusTotal: 3, gpuIndices: [0, 1, 2], reported: { gpuIndices: [0, 1, 2, 3] }, declared: { gpus: { count: 3 } } });
  });
});

describe('start failures', () => {
  const events = async (id: string) => (await listNodeEvents(autocommit(ds), id, 0, 100)).map((e) => [e.type, e.reason ?? null]);

  it('cordon the node at the threshold in a row, once, with reason START_FAILURES; an uncordon clears the reason and the count', async () => {
    const id = await enrolled();
    await recordReportedTopology(ds, [report(id)], T0);
    expect(await inTransaction(ds, (sql) => recordStartFailures(sql, [id], 3, T0))).toEqual([]);
    expect(await inTransaction(ds, (sql) => recordStartFailures(sql, [id], 3, T0))).toEqual([]);
    expect(await node(id)).toMatchObject({ startFailures: 2, cordoned: false });
    expect(await inTransaction(ds, (sql) => recordStartFailures(sql, [id], 3, T0))).toEqual([id]);
    expect(await node(id)).toMatchObject({ startFailures: 3, cordoned: true, cordonReason: 'START_FAILURES' });
    expect(await inTransaction(ds, (sql) => recordStartFailures(sql, [id], 3, T0))).toEqual([]);
    expect(await events(id)).toEqual([['CORDONED', 'START_FAILURES']]);

    expect(await setNodeCordoned(autocommit(ds), id, false, T0)).toMatchObject({ cordoned: false, cordonReason: null, startFailures: 0 });
  });

  it('leave a node an operator cordoned as it is', async () => {
    const id = await enrolled();
    await recordReportedTopology(ds, [report(id)], T0);
    await setNodeCordoned(autocommit(ds), id, true, T0);
    expect(await inTransaction(ds, (sql) => recordStartFailures(sql, [id], 1, T0))).toEqual([]);
    expect(await node(id)).toMatchObject({ cordoned: true, cordonReason: 'OPERATOR', startFailures: 1 });
  });
});
