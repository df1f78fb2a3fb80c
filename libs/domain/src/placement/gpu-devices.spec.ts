import fc from 'fast-check';
import { NodeDevices, chooseGpuIndices, holdGpuIndices, usableGpuIndices } from './gpu-devices';

describe('chooseGpuIndices', () => {
  it.each<[string, NodeDevices, number, number[] | null]>([
    ['no GPUs asked', { gpusTotal: 8 }, 0, []],
    ['counts only: the lowest indices', { gpusTotal: 8 }, 4, [0, 1, 2, 3]],
    ['held devices are skipped', { gpusTotal: 8, gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7], gpusHeld: [0, 1, 2, 3] }, 4, [4, 5, 6, 7]],
    ['an unhealthy device is never chosen', { gpusTotal: 7, gpuIndices: [0, 1, 3, 4, 5, 6, 7] }, 3, [0, 1, 3]],
    ['holes from held and unhealthy together', { gpusTotal: 6, gpuIndices: [0, 2, 3, 5, 6, 7], gpusHeld: [0, 3] }, 3, [2, 5, 6]],
    ['unsorted, repeated indices from an agent', { gpusTotal: 3, gpuIndices: [7, 2, 2, 5] }, 3, [2, 5, 7]],
    ['exactly the free devices', { gpusTotal: 2, gpuIndices: [4, 6], gpusHeld: [] }, 2, [4, 6]],
    ['fewer free than asked', { gpusTotal: 8, gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7], gpusHeld: [0, 1, 2, 3, 4, 5] }, 4, null],
    ['a held device that turned unhealthy frees nothing', { gpusTotal: 1, gpuIndices: [1], gpusHeld: [0, 1] }, 1, null],
    ['none at all', { gpusTotal: 0, gpuIndices: [] }, 1, null],
  ])('%s', (_name, node, count, expected) => {
    expect(chooseGpuIndices(node, count)).toEqual(expected);
  });

  it('usable indices default to 0 .. gpusTotal - 1', () => {
    expect(usableGpuIndices({ gpusTotal: 3 })).toEqual([0, 1, 2]);
    expect(usableGpuIndices({ gpusTotal: 3, gpuIndices: [] })).toEqual([]);
  });

  // Any node, any sequence of ranks taking devices from it: no index twice, none unhealthy, exactly
  // the rank's count, and a choice whenever the counts say there is room.
  it('never repeats an index, never picks an unusable one, and gives exactly the count asked', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.nat(63), { maxLength: 16 }),
        fc.uniqueArray(fc.nat(63), { maxLength: 16 }),
        fc.array(fc.nat(9), { maxLength: 12 }),
        (healthy, preHeld, asks) => {
          let node: NodeDevices = { gpusTotal: healthy.length, gpuIndices: healthy, gpusHeld: preHeld };
          const taken = new Set(preHeld);
          for (const count of asks) {
            const free = healthy.filter((i) => !taken.has(i)).length;
            const chosen = chooseGpuIndices(node, count);
            if (count > free) {
              expect(chosen).toBeNull();
              continue;
            }
            expect(chosen).not.toBeNull();
            expect(chosen!).toHaveLength(count);
            expect(new Set(chosen).size).toBe(count);
            for (const i of chosen!) {
              expect(healthy).toContain(i);
              expect(taken.has(i)).toBe(false);
              taken.add(i);
            }
            node = { ...node, gpusHeld: holdGpuIndices(node, chosen!) };
          }
        },
      ),
    );
  });
});
