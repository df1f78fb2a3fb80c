import fc from 'fast-check';
import { ExplainNode, ExplainSnapshot, explainJob } from './job-explain';

const NOW = 1_000_000;
const MODELS = ['H100', 'A100', null] as const;

const nodeArb = (i: number) =>
  fc
    .record({
      gpuModel: fc.constantFrom(...MODELS),
      gpusTotal: fc.constantFrom(0, 4, 8),
      gpusUsed: fc.integer({ min: 0, max: 8 }),
      cpuUsed: fc.integer({ min: 0, max: 32 }),
      cordoned: fc.boolean(),
      health: fc.constantFrom('HEALTHY', 'HEALTHY', 'DEGRADED', 'UNHEALTHY'),
    })
    .map((n): ExplainNode => ({
      id: `n${i}`,
      gpuModel: n.gpusTotal === 0 ? null : n.gpuModel,
      gpusTotal: n.gpusTotal,
      gpusAllocated: Math.min(n.gpusUsed, n.gpusTotal),
      cpuCores: 32,
      cpuAllocated: n.cpuUsed,
      memoryMiB: 65_536,
      memoryAllocated: 0,
      cordoned: n.cordoned,
      health: n.health as ExplainNode['health'],
    }));

const snapshotArb = fc
  .integer({ min: 1, max: 5 })
  .chain((count) =>
    fc.record({
      nodes: fc.tuple(...Array.from({ length: count }, (_, i) => nodeArb(i))),
      gpus: fc.integer({ min: 0, max: 8 }),
      model: fc.constantFrom(...MODELS),
      gang: fc.integer({ min: 1, max: 3 }),
      cpu: fc.integer({ min: 1, max: 16 }),
      quota: fc.option(fc.integer({ min: 0, max: 16 })),
      held: fc.integer({ min: 0, max: 16 }),
      running: fc.array(
        fc.record({
          node: fc.integer({ min: 0, max: count - 1 }),
          gpus: fc.integer({ min: 0, max: 8 }),
          deadline: fc.option(fc.integer({ min: 1, max: 100 })),
        }),
        { maxLength: 4 },
      ),
    }),
  )
  .map((r): ExplainSnapshot => ({
    nowMs: NOW,
    job: {
      queue: 'q',
      nodes: r.gang,
      request: { gpus: r.gpus, gpuModel: r.model, cpuCores: r.cpu, memoryMiB: 1 },
      pendingReason: null,
      depsPending: 0,
      notBeforeMs: null,
      maxRuntimeSeconds: null,
    },
    queues: [
      { name: 'q', priority: 0, quotaGpus: r.quota, heldGpus: r.held },
      { name: 'other', priority: 0, quotaGpus: null, heldGpus: 0 },
    ],
    nodes: r.nodes,
    running: r.running.map((x) => ({
      queue: 'q',
      nodeIds: [`n${x.node}`],
      perNode: { gpus: x.gpus, cpuCores: 1, memoryMiB: 0 },
      startedAtMs: NOW,
      maxRuntimeSeconds: x.deadline,
    })),
    aheadInQueue: 0,
    aheadOverall: 0,
    ahead: [],
  }));

describe('explainJob (properties)', () => {
  it('with nothing ahead, it names no blocker exactly when it estimates a start now, and never a start in the past', () => {
    fc.assert(
      fc.property(snapshotArb, (s) => {
        const e = explainJob(s);
        expect(e.blockers.length === 0).toBe(e.estimatedStartAtMs === NOW);
        if (e.estimatedStartAtMs !== null) expect(e.estimatedStartAtMs).toBeGreaterThanOrEqual(NOW);
      }),
      { numRuns: 500 },
    );
  });

  it('every change it suggests does let the job start now', () => {
    fc.assert(
      fc.property(snapshotArb, (s) => {
        for (const c of explainJob(s).wouldStartWith) {
          const changed: ExplainSnapshot =
            c.change === 'FEWER_GPUS'
              ? { ...s, job: { ...s.job, request: { ...s.job.request, gpus: Number(c.detail.split(' ')[0]) } } }
              : c.change === 'ANOTHER_MODEL'
                ? { ...s, job: { ...s.job, request: { ...s.job.request, gpuModel: c.detail.replace('gpuModel ', '') } } }
                : c.change === 'ANOTHER_QUEUE'
                  ? { ...s, job: { ...s.job, queue: c.detail.replace('queue ', '') } }
                  : { ...s, nodes: s.nodes.map((n) => (n.id === c.detail.replace('uncordon node ', '') ? { ...n, cordoned: false } : n)) };
          expect(explainJob(changed).blockers).toEqual([]);
        }
      }),
      { numRuns: 500 },
    );
  });
});
