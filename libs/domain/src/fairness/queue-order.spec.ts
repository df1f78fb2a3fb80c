import fc from 'fast-check';
import { ClusterCapacity, QueueShareState, QueuedJob, dominantShare, orderByPolicy } from './queue-order';

const total: ClusterCapacity = { gpus: 100, cpuCores: 1000, memoryMiB: 1_000_000 };
const queue = (name: string, over: Partial<QueueShareState> = {}): QueueShareState => ({
  name,
  priority: 0,
  weight: 1,
  quotaGpus: null,
  held: { gpus: 0, cpuCores: 0, memoryMiB: 0 },
  ...over,
});
const job = (id: string, q: string, gpus = 1, nodes = 1): QueuedJob => ({
  id,
  queue: q,
  nodes,
  resources: { gpus, gpuModel: null, cpuCores: 1, memoryMiB: 1 },
});
const ids = (jobs: QueuedJob[]) => jobs.map((j) => j.id);

describe('dominantShare', () => {
  it.each([
    [{ gpus: 50, cpuCores: 100, memoryMiB: 0 }, 1, 0.5],
    [{ gpus: 10, cpuCores: 500, memoryMiB: 0 }, 1, 0.5],
    [{ gpus: 50, cpuCores: 0, memoryMiB: 0 }, 2, 0.25],
    [{ gpus: 0, cpuCores: 0, memoryMiB: 0 }, 1, 0],
  ])('%j with weight %d -> %d', (held, weight, expected) => expect(dominantShare(held, total, weight)).toBeCloseTo(expected));
});

describe('orderByPolicy', () => {
  it('serves higher priority bands first', () => {
    const r = orderByPolicy([job('low1', 'low'), job('high1', 'high'), job('low2', 'low')], [queue('low'), queue('high', { priority: 10 })], total, 100);
    expect(ids(r.ordered)).toEqual(['high1', 'low1', 'low2']);
  });

  it('interleaves queues of one band by dominant share (DRF), FIFO within each', () => {
    const r = orderByPolicy(
      [job('a1', 'a'), job('a2', 'a'), job('a3', 'a'), job('b1', 'b'), job('b2', 'b')],
      [queue('a', { held: { gpus: 10, cpuCores: 0, memoryMiB: 0 } }), queue('b')],
      total,
      100,
    );
    // b starts with nothing held, so it goes first until its share passes a's.
    expect(ids(r.ordered)).toEqual(['b1', 'b2', 'a1', 'a2', 'a3']);
  });

  it('weights shares: a weight-2 queue gets about twice the picks', () => {
    const jobs = [...Array.from({ length: 6 }, (_, i) => job(`a${i}`, 'a', 10)), ...Array.from({ length: 6 }, (_, i) => job(`b${i}`, 'b', 10))];
    const r = orderByPolicy(jobs, [queue('a', { weight: 2 }), queue('b')], total, 100);
    const firstSix = ids(r.ordered).slice(0, 6);
    expect(firstSix.filter((id) => id.startsWith('a'))).toHaveLength(4);
  });

  it('holds a job that would pass its queue quota, and still considers smaller ones behind it', () => {
    const r = orderByPolicy(
      [job('big', 'q', 8), job('small', 'q', 2)],
      [queue('q', { quotaGpus: 4, held: { gpus: 2, cpuCores: 0, memoryMiB: 0 } })],
      total,
      100,
    );
    expect(ids(r.ordered)).toEqual(['small']);
    expect(r.held).toEqual([{ jobId: 'big', reason: 'QUOTA_EXCEEDED' }]);
  });

  it("lets a child borrow its siblings' unused guarantee up to its borrowing limit, and holds it at the cohort's guarantee", () => {
    const queues = [
      queue('org'),
      queue('a', { parent: 'org', quotaGpus: 4, borrowingLimitGpus: 4 }),
      queue('b', { parent: 'org', quotaGpus: 4, held: { gpus: 1, cpuCores: 0, memoryMiB: 0 } }),
    ];
    const r = orderByPolicy([job('a1', 'a', 4), job('a2', 'a', 2), job('a3', 'a', 2), job('a4', 'a', 1)], queues, total, 100);
    // a takes its 4 and borrows 3 of b's unused 3; a3 would take the cohort (b holds 1) past its 8.
    expect(ids(r.ordered)).toEqual(['a1', 'a2', 'a4']);
    expect(r.held).toEqual([{ jobId: 'a3', reason: 'QUOTA_EXCEEDED' }]);
  });

  it('counts a gang as all of its nodes against the quota', () => {
    const r = orderByPolicy([job('gang', 'q', 4, 3)], [queue('q', { quotaGpus: 8 })], total, 100);
    expect(r.held).toEqual([{ jobId: 'gang', reason: 'QUOTA_EXCEEDED' }]);
  });

  it('looks at most `lookahead` jobs deep per queue', () => {
    const r = orderByPolicy(
      Array.from({ length: 5 }, (_, i) => job(`j${i}`, 'q')),
      [queue('q')],
      total,
      3,
    );
    expect(ids(r.ordered)).toEqual(['j0', 'j1', 'j2']);
  });

  it('never lets a queue past its quota, and keeps FIFO within each queue (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ q: fc.constantFrom('a', 'b', 'c'), gpus: fc.integer({ min: 0, max: 8 }), nodes: fc.integer({ min: 1, max: 3 }) }), {
          maxLength: 40,
        }),
        fc.array(fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 3, maxLength: 3 }),
        (specs, quotas, priorities) => {
          const jobs = specs.map((s, i) => job(`j${i}`, s.q, s.gpus, s.nodes));
          const queues = ['a', 'b', 'c'].map((n, i) => queue(n, { quotaGpus: quotas[i], priority: priorities[i] }));
          const r = orderByPolicy(jobs, queues, total, 1000);
          expect(r.ordered.length + r.held.length).toBe(jobs.length);
          for (const q of queues) {
            const mine = r.ordered.filter((j) => j.queue === q.name);
            const gpus = mine.reduce((s, j) => s + j.resources.gpus * j.nodes, 0);
            if (q.quotaGpus !== null) expect(gpus).toBeLessThanOrEqual(q.quotaGpus);
            const positions = mine.map((j) => Number(j.id.slice(1)));
            expect(positions).toEqual([...positions].sort((x, y) => x - y));
          }
          // Bands: no job of a lower band is ordered before one of a higher band.
          const bandOf = (j: QueuedJob) => queues.find((q) => q.name === j.queue)!.priority;
          for (let i = 1; i < r.ordered.length; i++) expect(bandOf(r.ordered[i - 1])).toBeGreaterThanOrEqual(bandOf(r.ordered[i]));
        },
      ),
    );
  });
});
