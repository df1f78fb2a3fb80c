import { PlacementNode } from './schedulable';
import { heldByPriority } from './priority-hold';

function node(id: string, over: Partial<PlacementNode> = {}): PlacementNode {
  return {
    id,
    rack: 'r1',
    health: 'HEALTHY',
    cordoned: false,
    version: 1,
    gpuModel: 'H100',
    gpusTotal: 8,
    gpusAllocated: 0,
    cpuCores: 64,
    cpuAllocated: 0,
    memoryMiB: 524288,
    memoryAllocated: 0,
    ...over,
  };
}
const job = (gpus: number, band: number, nodes = 1) => ({ band, nodes, resources: { gpus, gpuModel: null, cpuCores: 1, memoryMiB: 1024 } });

describe('heldByPriority', () => {
  it.each<[string, PlacementNode[], Array<[string, number]>, ReturnType<typeof job>, boolean]>([
    ['a higher band took the node it fitted', [node('a')], [['a', 50]], job(4, 10), true],
    ['a higher band reserved the node it fitted', [node('a', { gpusAllocated: 2 })], [['a', 50]], job(4, 10), true],
    ['the same band took it: capacity, not priority', [node('a')], [['a', 10]], job(4, 10), false],
    ['a lower band took it: capacity', [node('a')], [['a', 5]], job(4, 10), false],
    ['it never fitted the free capacity: capacity', [node('a', { gpusAllocated: 6 })], [['a', 50]], job(4, 10), false],
    ['nobody claimed anything', [node('a')], [], job(4, 10), false],
    [
      'the higher band claimed a node it did not fit',
      [node('a', { gpusAllocated: 8 }), node('b')],
      [
        ['a', 50],
        ['b', 10],
      ],
      job(4, 10),
      false,
    ],
    ['a gang that fitted, one of its nodes taken by a higher band', [node('a'), node('b')], [['b', 50]], job(8, 10, 2), true],
    ['a gang that never had enough nodes', [node('a'), node('b', { gpusAllocated: 8 })], [['a', 50]], job(8, 10, 2), false],
    ['an unhealthy node does not count as fitted', [node('a', { health: 'UNHEALTHY' })], [['a', 50]], job(1, 10), false],
  ])('%s', (_name, atStart, claims, j, expected) => expect(heldByPriority(j, atStart, new Map(claims))).toBe(expected));
});
