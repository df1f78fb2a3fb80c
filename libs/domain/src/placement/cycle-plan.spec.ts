import fc from 'fast-check';
import { QueueShareState, QueuedJob } from '../fairness/queue-order';
import { lookaheadFilled, planCycle, schedulableCapacity } from './cycle-plan';
import { PlacementNode } from './schedulable';

const node = (id: string, over: Partial<PlacementNode> = {}): PlacementNode => ({
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
});
const job = (id: string, queue = 'q', gpus = 1, nodes = 1): QueuedJob => ({
  id,
  queue,
  nodes,
  resources: { gpus, gpuModel: null, cpuCores: 1, memoryMiB: 1024 },
});
const queue = (name: string, over: Partial<QueueShareState> = {}): QueueShareState => ({
  name,
  priority: 0,
  weight: 1,
  quotaGpus: null,
  held: { gpus: 0, cpuCores: 0, memoryMiB: 0 },
  ...over,
});
const cycle = (jobs: QueuedJob[], queues: QueueShareState[], nodes: PlacementNode[], lookahead = 100, batchSize = 100) =>
  planCycle({ jobs, queues, nodes, lookahead, batchSize });

describe('schedulableCapacity', () => {
  it.each<[string, PlacementNode[], number]>([
    ['every healthy node', [node('a'), node('b', { gpusTotal: 4 })], 12],
    ['not a DEGRADED or UNHEALTHY one', [node('a'), node('b', { health: 'DEGRADED' }), node('c', { health: 'UNHEALTHY' })], 8],
    ['not a cordoned one', [node('a', { cordoned: true }), node('b')], 8],
    ['allocations do not count against it', [node('a', { gpusAllocated: 8 })], 8],
    ['no nodes', [], 0],
  ])('%s', (_n, nodes, gpus) => expect(schedulableCapacity(nodes).gpus).toBe(gpus));
});

describe('lookaheadFilled', () => {
  it.each<[string, QueuedJob[], number, boolean]>([
    ['no jobs', [], 2, false],
    ['under the lookahead everywhere', [job('1', 'a'), job('2', 'b')], 2, false],
    ['one queue at the lookahead', [job('1', 'a'), job('2', 'b'), job('3', 'a')], 2, true],
    ['lookahead 1 and a job', [job('1')], 1, true],
  ])('%s', (_n, jobs, lookahead, expected) => expect(lookaheadFilled(jobs, lookahead)).toBe(expected));
});

describe('planCycle', () => {
  it('places in policy order: a higher band first, the lower band told PRIORITY', () => {
    const d = cycle([job('low', 'low', 8), job('high', 'high', 8)], [queue('low'), queue('high', { priority: 10 })], [node('a')]);
    expect(d.plan.placements.map((p) => [p.jobId, p.nodeIds])).toEqual([['high', ['a']]]);
    expect(d.pendingReasons).toEqual([{ jobId: 'low', reason: 'PRIORITY' }]);
    expect(d.moreQueued).toBe(false);
  });

  it('holds a job past its queue quota and says so', () => {
    const d = cycle([job('j', 'q', 4)], [queue('q', { quotaGpus: 6, held: { gpus: 4, cpuCores: 0, memoryMiB: 0 } })], [node('a')]);
    expect(d.plan.placements).toEqual([]);
    expect(d.pendingReasons).toEqual([{ jobId: 'j', reason: 'QUOTA_EXCEEDED' }]);
  });

  it('plans only the batch and says more is queued; the rest keep their last reason', () => {
    const d = cycle([job('1'), job('2'), job('3')], [queue('q')], [node('a')], 100, 2);
    expect(d.plan.placements.map((p) => p.jobId)).toEqual(['1', '2']);
    expect(d.pendingReasons).toEqual([]);
    expect(d.moreQueued).toBe(true);
  });

  it('says more is queued when a queue filled the lookahead', () => {
    expect(cycle([job('1'), job('2')], [queue('q')], [node('a')], 2).moreQueued).toBe(true);
  });

  it('every job of the batch is placed once or told why it waits; no node is over-committed', () => {
    const arbJob = fc.record({ queue: fc.constantFrom('a', 'b', 'c'), gpus: fc.integer({ min: 0, max: 8 }), nodes: fc.integer({ min: 1, max: 3 }) });
    const arbNode = fc.record({
      gpusTotal: fc.integer({ min: 0, max: 8 }),
      rack: fc.constantFrom('r1', 'r2'),
      health: fc.constantFrom('HEALTHY', 'HEALTHY', 'DEGRADED') as fc.Arbitrary<PlacementNode['health']>,
    });
    fc.assert(
      fc.property(fc.array(arbJob, { maxLength: 30 }), fc.array(arbNode, { maxLength: 10 }), fc.integer({ min: 1, max: 30 }), (js, ns, batchSize) => {
        const jobs = js.map((j, i) => job(`j${i}`, j.queue, j.gpus, j.nodes));
        const nodes = ns.map((n, i) => node(`n${i}`, n));
        const queues = [queue('a', { priority: 5 }), queue('b', { quotaGpus: 8 }), queue('c', { weight: 2 })];
        const d = cycle(jobs, queues, nodes, 100, batchSize);
        const placed = d.plan.placements.map((p) => p.jobId);
        const waiting = d.pendingReasons.map((p) => p.jobId);
        expect(new Set([...placed, ...waiting]).size).toBe(placed.length + waiting.length);
        const batch = d.order.ordered.slice(0, batchSize).map((j) => j.id);
        expect(new Set([...placed, ...waiting])).toEqual(new Set([...batch, ...d.order.held.map((h) => h.jobId)]));
        expect(d.moreQueued).toBe(d.order.ordered.length > batchSize);
        const used = new Map<string, number>();
        for (const p of d.plan.placements) {
          const j = jobs.find((x) => x.id === p.jobId)!;
          expect(new Set(p.nodeIds).size).toBe(j.nodes);
          for (const id of p.nodeIds) used.set(id, (used.get(id) ?? 0) + j.resources.gpus);
        }
        for (const n of nodes) expect(used.get(n.id) ?? 0).toBeLessThanOrEqual(n.gpusTotal);
      }),
      { numRuns: 300 },
    );
  });
});
