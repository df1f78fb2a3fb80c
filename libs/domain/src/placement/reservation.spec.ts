import { PlacementNode } from './schedulable';
import { chooseReservation } from './reservation';

function node(id: string, over: Partial<PlacementNode> = {}): PlacementNode {
  return {
    id, rack: 'r1', health: 'HEALTHY', cordoned: false, version: 1,
    gpuModel: 'H100', gpusTotal: 8, gpusAllocated: 0, cpuCores: 64, cpuAllocated: 0,
    memoryMiB: 524288, memoryAllocated: 0, ...over,
  };
}
const req = (gpus: number, nodes = 1, gpuModel: string | null = null) => ({ nodes, resources: { gpus, gpuModel, cpuCores: 1, memoryMiB: 1024 } });

describe('chooseReservation', () => {
  it.each<[string, PlacementNode[], ReturnType<typeof req>, string[] | null]>([
    ['the node missing the fewest GPUs', [node('a', { gpusAllocated: 7 }), node('b', { gpusAllocated: 2 })], req(8), ['b']],
    ['then the fewest CPU cores', [node('a', { gpusAllocated: 4, cpuAllocated: 64 }), node('b', { gpusAllocated: 4, cpuAllocated: 10 })], req(8), ['b']],
    ['ties go by id', [node('b', { gpusAllocated: 4 }), node('a', { gpusAllocated: 4 })], req(8), ['a']],
    ['a gang takes as many nodes as it has ranks', [node('a', { gpusAllocated: 8 }), node('b', { gpusAllocated: 1 }), node('c', { gpusAllocated: 3 })], req(8, 2), ['b', 'c']],
    ['skips nodes that could never hold it', [node('a', { gpuModel: 'A100' }), node('b', { gpusAllocated: 8 })], req(8, 1, 'H100'), ['b']],
    ['skips unhealthy and cordoned nodes', [node('a', { health: 'DEGRADED' }), node('b', { cordoned: true }), node('c', { gpusAllocated: 8 })], req(1), ['c']],
    ['none when the fleet could never hold it', [node('a')], req(16), null],
    ['none when too few nodes could ever hold the gang', [node('a'), node('b', { gpuModel: 'L4', gpusTotal: 4 })], req(8, 2), null],
  ])('%s', (_name, nodes, job, expected) => expect(chooseReservation(job, nodes)).toEqual(expected));
});
