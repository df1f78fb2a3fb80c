import { UsageError } from './cli-error';
import { InventoryFlags, declaredInventory, inventoryFromFlags } from './inventory-flags';

describe('inventoryFromFlags', () => {
  it.each<[string, InventoryFlags, object]>([
    ['nothing given', {}, {}],
    [
      'every flag',
      { gpus: 'H100:8', cpuCores: '96', memoryMib: '1048576', address: '10.0.0.7' },
      { gpus: { model: 'H100', count: 8 }, cpuCores: 96, memoryMiB: 1048576, address: '10.0.0.7' },
    ],
    ['a model with a colon and spaces', { gpus: 'NVIDIA A100: SXM:4' }, { gpus: { model: 'NVIDIA A100: SXM', count: 4 } }],
    ['no GPUs', { gpus: 'none' }, { gpus: null }],
    ['the address unpinned', { address: 'none' }, { address: null }],
  ])('%s', (_n, flags, patch) => {
    expect(inventoryFromFlags(flags)).toEqual(patch);
  });

  it.each<[string, InventoryFlags, RegExp]>([
    ['a count missing', { gpus: 'H100' }, /--gpus must be <model>:<count>/],
    ['cores not a number', { cpuCores: 'many' }, /--cpu-cores must be a whole number/],
    ['memory negative', { memoryMib: '-1' }, /--memory-mib must be a whole number/],
  ])('refuses %s', (_n, flags, message) => {
    expect(() => inventoryFromFlags(flags)).toThrow(UsageError);
    expect(() => inventoryFromFlags(flags)).toThrow(message);
  });
});

describe('declaredInventory', () => {
  it('is null without flags (the node pins its first report)', () => expect(declaredInventory({})).toBeNull());
  it('needs cores and memory once any flag is given', () => expect(() => declaredInventory({ gpus: 'H100:8' })).toThrow(/--cpu-cores and --memory-mib/));
  it('is the whole inventory otherwise', () => expect(declaredInventory({ cpuCores: '8', memoryMib: '1024' })).toEqual({ cpuCores: 8, memoryMiB: 1024 }));
});
