import fc from 'fast-check';
import { ResourceRequest, allocate, fitsNow } from '../resources/resources';
import { FitIndex } from './fit-index';
import { PlacementNode, schedulable } from './schedulable';

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
const req = (over: Partial<ResourceRequest> = {}): ResourceRequest => ({ gpus: 1, gpuModel: null, cpuCores: 1, memoryMiB: 1024, ...over });

/** What the index must answer: the best fit by a pass over every node (the planner's old scan). */
function scan(nodes: PlacementNode[], r: ResourceRequest, excluded: ReadonlySet<string>): string | null {
  const free = (n: PlacementNode) => [n.gpusTotal - n.gpusAllocated, n.cpuCores - n.cpuAllocated, n.memoryMiB - n.memoryAllocated];
  let best: PlacementNode | null = null;
  for (const n of nodes) {
    if (!schedulable(n) || excluded.has(n.id) || !fitsNow(n, r)) continue;
    if (best === null) best = n;
    else {
      const [a, b] = [free(n), free(best)];
      const d = a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || (n.id < best.id ? -1 : 1);
      if (d < 0) best = n;
    }
  }
  return best?.id ?? null;
}

describe('FitIndex', () => {
  it.each<[string, PlacementNode[], ResourceRequest, string[], string | null]>([
    ['fewest free GPUs first', [node('a'), node('b', { gpusAllocated: 6 })], req({ gpus: 2 }), [], 'b'],
    ['then fewest free cores', [node('a', { cpuAllocated: 10 }), node('b', { cpuAllocated: 20 })], req(), [], 'b'],
    ['then least free memory', [node('a', { memoryAllocated: 10 }), node('b', { memoryAllocated: 20 })], req(), [], 'b'],
    ['then the lower id', [node('b'), node('a')], req(), [], 'a'],
    ['a fuller node of another model wins for any model', [node('a'), node('b', { gpuModel: 'L4', gpusTotal: 4 })], req(), [], 'b'],
    ['the requested model only', [node('a', { gpuModel: 'L4', gpusTotal: 4 }), node('b')], req({ gpuModel: 'H100' }), [], 'b'],
    ['gpus 0 ignores the model', [node('a', { gpuModel: null, gpusTotal: 0 })], req({ gpus: 0, gpuModel: 'H100' }), [], 'a'],
    ['skips a node short of cores', [node('a', { gpusAllocated: 7, cpuAllocated: 64 }), node('b')], req(), [], 'b'],
    ['skips a node short of memory', [node('a', { gpusAllocated: 7, memoryAllocated: 524288 }), node('b')], req(), [], 'b'],
    ['skips excluded (reserved) nodes', [node('a', { gpusAllocated: 7 }), node('b')], req(), ['a'], 'b'],
    ['skips DEGRADED and cordoned nodes', [node('a', { health: 'DEGRADED' }), node('b', { cordoned: true })], req(), [], null],
    ['nothing fits', [node('a', { gpusAllocated: 8 })], req(), [], null],
    ['an over-allocated node fits nothing', [node('a', { gpusAllocated: 9 })], req({ gpus: 0 }), [], null],
  ])('%s', (_name, nodes, r, excluded, expected) => {
    expect(new FitIndex(nodes).best(r, new Set(excluded))?.id ?? null).toBe(expected);
    expect(scan(nodes, r, new Set(excluded))).toBe(expected);
  });

  it('answers as a scan of the fleet would (best and every fitting node), across allocations', () => {
    const arbNode = (i: number) =>
      fc
        .record({
          model: fc.constantFrom('H100', 'A100', null),
          total: fc.constantFrom(0, 4, 8),
          gpus: fc.nat(8),
          cpu: fc.nat(8),
          mem: fc.nat(4),
          health: fc.constantFrom('HEALTHY', 'HEALTHY', 'HEALTHY', 'DEGRADED'),
          cordoned: fc.boolean(),
        })
        .map((x): PlacementNode =>
          node(`n${String(i).padStart(3, '0')}`, {
            gpuModel: x.model,
            gpusTotal: x.model === null ? 0 : x.total,
            gpusAllocated: Math.min(x.gpus, x.model === null ? 0 : x.total),
            cpuCores: 8,
            cpuAllocated: x.cpu,
            memoryMiB: 4,
            memoryAllocated: x.mem,
            health: x.health as PlacementNode['health'],
            cordoned: x.cordoned,
          }),
        );
    const arbReq = fc.record({ gpus: fc.nat(4), gpuModel: fc.constantFrom('H100', 'A100', null), cpuCores: fc.nat(4), memoryMiB: fc.nat(2) });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => arbNode(i)))),
        fc.array(arbReq, { minLength: 1, maxLength: 20 }),
        fc.array(fc.nat(29), { maxLength: 3 }),
        (nodes, reqs, excludedAt) => {
          const excluded = new Set(excludedAt.map((i) => nodes[i % nodes.length].id));
          const state = new Map(nodes.map((n) => [n.id, n]));
          const index = new FitIndex(nodes);
          for (const r of reqs) {
            const got = index.best(r, excluded);
            expect(got?.id ?? null).toBe(scan([...state.values()], r, excluded));
            const fitting = [...state.values()]
              .filter((n) => schedulable(n) && !excluded.has(n.id) && fitsNow(n, r))
              .map((n) => n.id)
              .sort();
            expect(
              index
                .fitting(r, excluded)
                .map((n) => n.id)
                .sort(),
            ).toEqual(fitting);
            if (got) {
              const after = allocate(got, r);
              state.set(got.id, after);
              index.replace(got, after);
            }
          }
        },
      ),
    );
  });
});
