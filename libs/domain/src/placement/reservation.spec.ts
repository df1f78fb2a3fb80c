import { PlacementNode } from './schedulable';
import { chooseReservation } from './reservation';

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
const req = (gpus: number, nodes = 1, gpuModel: string | null = null) => ({ nodes, resources: { gpus, gpuModel, cpuCores: 1, memoryMiB: 1024 } });

describe('chooseReservation', () => {
  it.each<[string, PlacementNode[], ReturnType<typeof req>, string[] | null]>([
    ['the node missing the fewest GPUs', [node('a', { gpusAllocated: 7 }), node('b', { gpusAllocated: 2 })], req(8), ['b']],
    ['then the fewest CPU cores', [node('a', { gpusAllocated: 4, cpuAllocated: 64 }), node('b', { gpusAllocated: 4, cpuAllocated: 10 })], req(8), ['b']],
    ['ties go by id', [node('b', { gpusAllocated: 4 }), node('a', { gpusAllocated: 4 })], req(8), ['a']],
    [
      'a gang takes as many nodes as it has ranks',
      [node('a', { gpusAllocated: 8 }), node('b', { gpusAllocated: 1 }), node('c', { gpusAllocated: 3 })],
      req(8, 2),
      ['b', 'c'],
    ],
    ['skips nodes that could never hold it', [node('a', { gpuModel: 'A100' }), node('b', { gpusAllocated: 8 })], req(8, 1, 'H100'), ['b']],
    ['skips unhealthy and cordoned nodes', [node('a', { health: 'DEGRADED' }), node('b', { cordoned: true }), node('c', { gpusAllocated: 8 })], req(1), ['c']],
    ['none when the fleet could never hold it', [node('a')], req(16), null],
    ['none when too few nodes could ever hold the gang', [node('a'), node('b', { gpuModel: 'L4', gpusTotal: 4 })], req(8, 2), null],
  ])('%s', (_name, nodes, job, expected) => expect(chooseReservation(job, nodes)).toEqual(expected));
});

describe('chooseReservation with runtime backfill (when each node would be ready)', () => {
  const ready = (at: Record<string, number>) => (n: { id: string }) => at[n.id] ?? Number.POSITIVE_INFINITY;
  it.each<[string, PlacementNode[], ReturnType<typeof req>, Record<string, number>, string[]]>([
    [
      'the node ready earliest, even if another is nearer to fitting now',
      [node('a', { gpusAllocated: 8 }), node('b', { gpusAllocated: 1 })],
      req(8),
      { a: 10, b: 50 },
      ['a'],
    ],
    ['equal ready times: the nearest to fitting', [node('a', { gpusAllocated: 8 }), node('b', { gpusAllocated: 1 })], req(8), { a: 10, b: 10 }, ['b']],
    ['a node never known to be ready comes last', [node('a', { gpusAllocated: 1 }), node('b', { gpusAllocated: 8 })], req(8), { b: 90 }, ['b']],
    [
      'a gang: the earliest-ready nodes, so its estimate (their latest) is the least it can be',
      [node('a'), node('b', { gpusAllocated: 8 }), node('c', { gpusAllocated: 2 }), node('d', { gpusAllocated: 8 })],
      req(8, 3),
      { a: 0, b: 30, c: 70, d: 20 },
      ['a', 'd', 'b'],
    ],
  ])('%s', (_name, nodes, job, at, expected) => expect(chooseReservation(job, nodes, ready(at))).toEqual(expected));
});
