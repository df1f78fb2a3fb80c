import {
  InventoryPatch,
  InventoryResource,
  NodeInventory,
  believedTopology,
  inventoryOf,
  patchInventory,
  pinAfterReport,
  sameInventory,
} from './declared-inventory';
import { NodeTopology } from './node-topology';

const reported = (over: Partial<NodeTopology> = {}): NodeTopology => ({
  id: 'n1',
  zone: 'z',
  rack: 'r',
  gpuModel: 'H100',
  gpusTotal: 8,
  gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7],
  address: '10.0.0.7',
  logsPort: 9250,
  cpuCores: 96,
  memoryMiB: 1_048_576,
  ...over,
});
const pinned = (over: Partial<NodeInventory> = {}): NodeInventory => ({
  gpus: { model: 'H100', count: 8 },
  cpuCores: 96,
  memoryMiB: 1_048_576,
  address: '10.0.0.7',
  ...over,
});

describe('believedTopology', () => {
  it.each<[string, Partial<NodeTopology>, Partial<NodeInventory>, Partial<NodeTopology>, InventoryResource[]]>([
    ['a node reporting what was declared is believed whole', {}, {}, {}, []],
    [
      'more GPUs than declared: the declared count, the lowest devices',
      {},
      { gpus: { model: 'H100', count: 2 } },
      { gpusTotal: 2, gpuIndices: [0, 1] },
      ['gpus'],
    ],
    [
      'fewer GPUs than declared (one failed): what it reports',
      { gpusTotal: 7, gpuIndices: [0, 1, 2, 3, 4, 6, 7] },
      {},
      { gpusTotal: 7, gpuIndices: [0, 1, 2, 3, 4, 6, 7] },
      [],
    ],
    ['GPUs of another model: none credited', { gpuModel: 'A100' }, {}, { gpuModel: 'H100', gpusTotal: 0, gpuIndices: [] }, ['gpus']],
    ['GPUs on a node declared without any: none credited', {}, { gpus: null }, { gpuModel: null, gpusTotal: 0, gpuIndices: [] }, ['gpus']],
    ['no GPUs reported, some declared: none', { gpuModel: null, gpusTotal: 0, gpuIndices: [] }, {}, { gpuModel: 'H100', gpusTotal: 0, gpuIndices: [] }, []],
    ['more cores than declared: the declared cores', { cpuCores: 512 }, {}, { cpuCores: 96 }, ['cpuCores']],
    ['fewer cores than declared: the reported cores', { cpuCores: 64 }, {}, { cpuCores: 64 }, []],
    ['more memory than declared: the declared memory', { memoryMiB: 4_194_304 }, {}, { memoryMiB: 1_048_576 }, ['memoryMiB']],
    ['another address: the pinned one, never the reported one', { address: '169.254.169.254' }, {}, { address: '10.0.0.7' }, ['address']],
    ['no address reported: the pinned one', { address: null }, {}, { address: '10.0.0.7' }, []],
    [
      'everything at once, in order',
      { gpusTotal: 9, gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7, 8], cpuCores: 97, memoryMiB: 2_000_000, address: 'x' },
      {},
      { gpusTotal: 8, gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7], cpuCores: 96, memoryMiB: 1_048_576, address: '10.0.0.7' },
      ['gpus', 'cpuCores', 'memoryMiB', 'address'],
    ],
  ])('%s', (_n, report, pin, expected, exceeded) => {
    const r = reported(report);
    const b = believedTopology(r, pinned(pin));
    expect(b.topology).toEqual({ ...r, ...expected });
    expect(b.exceeded).toEqual(exceeded);
  });

  it('keeps what only the node can say: zone, rack and its logs port', () => {
    const b = believedTopology(reported({ zone: 'z2', rack: 'r9', logsPort: 1234 }), pinned());
    expect([b.topology.zone, b.topology.rack, b.topology.logsPort]).toEqual(['z2', 'r9', 1234]);
  });
});

describe('pinAfterReport', () => {
  it.each<[string, NodeInventory | null, Partial<NodeTopology>, NodeInventory]>([
    ['nothing pinned: the report is', null, {}, pinned()],
    ['nothing pinned, no GPUs reported: none pinned', null, { gpuModel: null, gpusTotal: 0, gpuIndices: [] }, pinned({ gpus: null })],
    ['nothing pinned, GPUs all unhealthy: every installed one is pinned', null, { gpusTotal: 0, gpuIndices: [], gpusInstalled: 8 }, pinned()],
    [
      'nothing pinned, one GPU unhealthy: it is pinned too, and believed once it recovers',
      null,
      { gpusTotal: 7, gpuIndices: [0, 1, 2, 3, 4, 5, 6], gpusInstalled: 8 },
      pinned(),
    ],
    ['a declared inventory is kept whatever the report says', pinned({ cpuCores: 4 }), { cpuCores: 512 }, pinned({ cpuCores: 4 })],
    ['a declaration without an address pins the first reported one', pinned({ address: null }), { address: '10.1.1.1' }, pinned({ address: '10.1.1.1' })],
    ['a pinned address is never replaced by a report', pinned(), { address: '10.1.1.1' }, pinned()],
    ['no address reported: none pinned yet', pinned({ address: null }), { address: null }, pinned({ address: null })],
  ])('%s', (_n, before, report, after) => {
    expect(pinAfterReport(before, reported(report))).toEqual(after);
  });

  it('returns the pinned inventory itself when nothing changes (the caller writes only changes)', () => {
    const p = pinned();
    expect(pinAfterReport(p, reported({ cpuCores: 1 }))).toBe(p);
  });
});

describe('inventoryOf and sameInventory', () => {
  it('a node pinned from its own report is believed exactly as it reports', () => {
    const r = reported({ gpusTotal: 3, gpuIndices: [1, 4, 6] });
    expect(believedTopology(r, inventoryOf(r))).toEqual({ topology: r, exceeded: [] });
  });

  it.each<[string, NodeInventory | null, NodeInventory | null, boolean]>([
    ['equal', pinned(), pinned(), true],
    ['both none', null, null, true],
    ['one none', pinned(), null, false],
    ['another count', pinned(), pinned({ gpus: { model: 'H100', count: 4 } }), false],
    ['another model', pinned(), pinned({ gpus: { model: 'A100', count: 8 } }), false],
    ['no GPUs against some', pinned({ gpus: null }), pinned(), false],
    ['another address', pinned(), pinned({ address: null }), false],
  ])('sameInventory: %s', (_n, a, b, same) => {
    expect(sameInventory(a, b)).toBe(same);
  });
});

describe('patchInventory', () => {
  it.each<[string, NodeInventory | null, InventoryPatch, ReturnType<typeof patchInventory>]>([
    ['a field given replaces it, the rest stay', pinned(), { gpus: { model: 'H100', count: 4 } }, { inventory: pinned({ gpus: { model: 'H100', count: 4 } }) }],
    ['gpus null: none', pinned(), { gpus: null }, { inventory: pinned({ gpus: null }) }],
    ['address null: unpinned', pinned(), { address: null }, { inventory: pinned({ address: null }) }],
    ['an empty patch changes nothing', pinned(), {}, { inventory: pinned() }],
    [
      'nothing pinned yet, everything given',
      null,
      { cpuCores: 8, memoryMiB: 1024 },
      { inventory: { gpus: null, cpuCores: 8, memoryMiB: 1024, address: null } },
    ],
    ['nothing pinned yet, memory missing', null, { cpuCores: 8 }, { missing: ['memoryMiB'] }],
    ['nothing pinned yet, both missing', null, { gpus: null }, { missing: ['cpuCores', 'memoryMiB'] }],
  ])('%s', (_n, before, patch, after) => {
    expect(patchInventory(before, patch)).toEqual(after);
  });
});
