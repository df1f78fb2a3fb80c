import { ExplainJob, ExplainNode, ExplainQueue, ExplainSnapshot, RunningAttempt, explainJob } from './job-explain';

const NOW = 1_000_000;
const node = (id: string, over: Partial<ExplainNode> = {}): ExplainNode => ({
  id,
  gpuModel: 'H100',
  gpusTotal: 8,
  gpusAllocated: 0,
  cpuCores: 96,
  cpuAllocated: 0,
  memoryMiB: 1_048_576,
  memoryAllocated: 0,
  health: 'HEALTHY',
  cordoned: false,
  ...over,
});
const job = (over: Partial<ExplainJob> = {}): ExplainJob => ({
  queue: 'q',
  nodes: 1,
  request: { gpus: 8, gpuModel: 'H100', cpuCores: 4, memoryMiB: 1024 },
  pendingReason: 'INSUFFICIENT_CAPACITY:gpus',
  depsPending: 0,
  notBeforeMs: null,
  maxRuntimeSeconds: null,
  ...over,
});
const queue = (over: Partial<ExplainQueue> = {}): ExplainQueue => ({ name: 'q', priority: 0, quotaGpus: null, heldGpus: 0, ...over });
const run = (nodeIds: string[], gpus: number, startedAtMs: number, maxRuntimeSeconds: number | null, q = 'q'): RunningAttempt => ({
  queue: q,
  nodeIds,
  perNode: { gpus, cpuCores: 4, memoryMiB: 1024 },
  startedAtMs,
  maxRuntimeSeconds,
});
const snap = (over: Partial<ExplainSnapshot> = {}): ExplainSnapshot => ({
  nowMs: NOW,
  job: job(),
  queues: [queue(), queue({ name: 'default' })],
  nodes: [node('n0')],
  running: [],
  aheadInQueue: 0,
  aheadOverall: 0,
  ahead: [],
  ...over,
});
/** n0 full (8 GPUs held until NOW + 60 s by a job of q), n1 cordoned and empty, n2 an empty A100. */
const full = node('n0', { gpusAllocated: 8 });
const fleet = [full, node('n1', { cordoned: true }), node('n2', { gpuModel: 'A100' })];
const fillerRun = run(['n0'], 8, NOW - 10_000, 70);

describe('explainJob', () => {
  it.each<[string, ExplainSnapshot, object]>([
    ['a job it would place now: no blockers, starts now', snap(), { blockers: [], estimatedStartAtMs: NOW }],
    [
      'a cordoned or dead node with room blocks nothing while an open one has room',
      snap({ nodes: [node('n0'), node('n1', { cordoned: true }), node('n2', { health: 'UNHEALTHY' })] }),
      { blockers: [], wouldStartWith: [], estimatedStartAtMs: NOW },
    ],
    [
      'while it is blocked, a dead node with room is one more reason, and does not stop an uncordon from being enough',
      snap({ nodes: [...fleet, node('n3', { health: 'UNHEALTHY' })], running: [fillerRun] }),
      {
        blockers: [{ reason: 'NODES_CORDONED' }, { reason: 'NODES_UNHEALTHY' }, { reason: 'INSUFFICIENT_CAPACITY' }],
        wouldStartWith: [{ change: 'ANOTHER_MODEL' }, { change: 'UNCORDON_NODE', detail: 'uncordon node n1' }],
      },
    ],
    [
      'blocked by quota, capacity and a cordoned node at once: all three, each with its deficit; no single change is enough',
      snap({ nodes: fleet, queues: [queue({ quotaGpus: 8, heldGpus: 8 }), queue({ name: 'default' })], running: [fillerRun] }),
      {
        blockers: [
          { reason: 'QUOTA_EXCEEDED', deficit: { gpus: 8, cpuCores: 0, memoryMiB: 0 } },
          { reason: 'NODES_CORDONED', deficit: { gpus: 0, cpuCores: 0, memoryMiB: 0 } },
          { reason: 'INSUFFICIENT_CAPACITY', deficit: { gpus: 8, cpuCores: 0, memoryMiB: 0 } },
        ],
        wouldStartWith: [],
        // The filler ends at NOW + 60 s: its quota and its node come back.
        estimatedStartAtMs: NOW + 60_000,
      },
    ],
    [
      'capacity and a cordon: uncordoning or another model would do it',
      snap({ nodes: fleet, running: [fillerRun] }),
      {
        blockers: [{ reason: 'NODES_CORDONED' }, { reason: 'INSUFFICIENT_CAPACITY' }],
        wouldStartWith: [
          { change: 'ANOTHER_MODEL', detail: 'gpuModel A100' },
          { change: 'UNCORDON_NODE', detail: 'uncordon node n1' },
        ],
      },
    ],
    [
      'quota alone: another queue would do it',
      snap({ queues: [queue({ quotaGpus: 4 }), queue({ name: 'default' })] }),
      {
        blockers: [{ reason: 'QUOTA_EXCEEDED', deficit: { gpus: 4 } }],
        wouldStartWith: [
          { change: 'ANOTHER_QUEUE', detail: 'queue default' },
          { change: 'FEWER_GPUS', detail: '4 GPUs per node instead of 8' },
        ].reverse(),
      },
    ],
    // A cohort (ADR 0039): org's children q (guarantee 8, may borrow 8) and s (guarantee 8). The
    // fleet has room; only the limits decide, as the scheduler's judgeQuota does.
    [
      'a child past its guarantee but within its borrowing limit, the cohort with room: no quota blocker',
      snap({
        nodes: [node('n0'), node('n1')],
        queues: [
          queue({ quotaGpus: 8, heldGpus: 8, parent: 'org', borrowingLimitGpus: 8 }),
          queue({ name: 's', quotaGpus: 8, parent: 'org' }),
          queue({ name: 'org' }),
        ],
      }),
      { blockers: [], estimatedStartAtMs: NOW },
    ],
    [
      'a child at guarantee + borrowing limit: QUOTA_EXCEEDED naming both',
      snap({
        nodes: [node('n0'), node('n1')],
        queues: [
          queue({ quotaGpus: 8, heldGpus: 16, parent: 'org', borrowingLimitGpus: 8 }),
          queue({ name: 's', quotaGpus: 8, parent: 'org' }),
          queue({ name: 'org' }),
        ],
      }),
      {
        blockers: [{ reason: 'QUOTA_EXCEEDED', detail: 'queue q holds 16 of its 16 GPUs (guarantee 8 + borrowing 8); this job needs 8', deficit: { gpus: 8 } }],
      },
    ],
    [
      'a child within its own limits whose siblings fill the cohort: QUOTA_EXCEEDED for the cohort; when they end, it starts',
      snap({
        nodes: [node('n0'), node('n1', { gpusAllocated: 8 })],
        queues: [
          queue({ quotaGpus: 8, heldGpus: 0, parent: 'org' }),
          queue({ name: 's', quotaGpus: 8, heldGpus: 16, parent: 'org', borrowingLimitGpus: 8 }),
          queue({ name: 'org' }),
        ],
        running: [run(['n1'], 8, NOW, 30, 's')],
      }),
      {
        blockers: [
          { reason: 'QUOTA_EXCEEDED', detail: "cohort org holds 16 of its members' 16 guaranteed GPUs (queue q: 0); this job needs 8", deficit: { gpus: 8 } },
        ],
        estimatedStartAtMs: NOW + 30_000,
      },
    ],
    [
      'fewer GPUs: half the node is free',
      snap({ nodes: [node('n0', { gpusAllocated: 4 })] }),
      {
        blockers: [{ reason: 'INSUFFICIENT_CAPACITY', deficit: { gpus: 4, cpuCores: 0, memoryMiB: 0 } }],
        wouldStartWith: [{ change: 'FEWER_GPUS', detail: '4 GPUs per node instead of 8' }],
        estimatedStartAtMs: null,
      },
    ],
    [
      'no node could ever hold it: NO_MATCHING_NODES, with how far the largest falls short, and no estimate',
      snap({ job: job({ request: { gpus: 16, gpuModel: 'H100', cpuCores: 4, memoryMiB: 1024 } }) }),
      { blockers: [{ reason: 'NO_MATCHING_NODES', deficit: { gpus: 8, cpuCores: 0, memoryMiB: 0 } }], estimatedStartAtMs: null },
    ],
    [
      'a gang of 2 with one open node and one unhealthy',
      snap({ job: job({ nodes: 2 }), nodes: [node('n0'), node('n1', { health: 'DEGRADED' })] }),
      { blockers: [{ reason: 'NODES_UNHEALTHY' }], estimatedStartAtMs: null },
    ],
    [
      'waiting for dependencies: nothing to suggest, no estimate',
      snap({ job: job({ depsPending: 2 }) }),
      { blockers: [{ reason: 'DEPENDENCY' }], wouldStartWith: [], estimatedStartAtMs: null },
    ],
    [
      'backing off: starts when the backoff ends',
      snap({ job: job({ notBeforeMs: NOW + 5_000 }) }),
      { blockers: [{ reason: 'BACKOFF' }], wouldStartWith: [], estimatedStartAtMs: NOW + 5_000 },
    ],
    [
      'backing off past the end of what blocks it too',
      snap({ job: job({ notBeforeMs: NOW + 5_000 }), nodes: [full], running: [run(['n0'], 8, NOW, 2)] }),
      { estimatedStartAtMs: NOW + 5_000 },
    ],
    [
      'what holds the capacity has no deadline: no estimate',
      snap({ nodes: [full], running: [run(['n0'], 8, NOW - 1, null)] }),
      { blockers: [{ reason: 'INSUFFICIENT_CAPACITY' }], estimatedStartAtMs: null },
    ],
    [
      'a deadline already past counts as ending now (the agent is about to stop it)',
      snap({ nodes: [full], running: [run(['n0'], 8, NOW - 100_000, 10)] }),
      { estimatedStartAtMs: NOW },
    ],
    [
      'a job ahead takes the first capacity freed; this one starts when the next attempt ends',
      snap({
        nodes: [full, node('n1', { gpusAllocated: 8 })],
        running: [run(['n0'], 8, NOW, 10), run(['n1'], 8, NOW, 30)],
        ahead: [{ queue: 'q', nodes: 1, request: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1 }, maxRuntimeSeconds: null }],
        aheadInQueue: 1,
        aheadOverall: 3,
      }),
      { position: { queue: 2, overall: 4 }, estimatedStartAtMs: NOW + 30_000 },
    ],
    [
      'a job ahead that ends frees its node again',
      snap({
        nodes: [full],
        running: [run(['n0'], 8, NOW, 10)],
        ahead: [{ queue: 'q', nodes: 1, request: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1 }, maxRuntimeSeconds: 20 }],
      }),
      { estimatedStartAtMs: NOW + 30_000 },
    ],
    // As the scheduler's plan: the 8-GPU job ahead, kept out, holds n0 (nearest to fitting); this 4-GPU job does not backfill
    // into it, and starts when the job ahead, placed on n0 at +60 s, ends at +90 s.
    [
      'a bigger job ahead kept out holds the node nearest to fitting: this one does not backfill into it',
      snap({
        job: job({ request: { gpus: 4, gpuModel: 'H100', cpuCores: 4, memoryMiB: 1024 } }),
        nodes: [node('n0', { gpusAllocated: 4 }), node('n1', { gpusAllocated: 6 })],
        running: [run(['n0'], 4, NOW, 60), run(['n1'], 6, NOW, 120)],
        ahead: [{ queue: 'q', nodes: 1, request: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1 }, maxRuntimeSeconds: 30 }],
      }),
      { estimatedStartAtMs: NOW + 90_000 },
    ],
    // Runtime backfill (ADR 0008): the node held for the 8-GPU job ahead frees at +60 s, so a job that ends by then starts there now.
    [
      'a job whose maxRuntimeSeconds ends before the held node frees starts there now',
      snap({
        job: job({ request: { gpus: 4, gpuModel: 'H100', cpuCores: 4, memoryMiB: 1024 }, maxRuntimeSeconds: 60 }),
        nodes: [node('n0', { gpusAllocated: 4 }), node('n1', { gpusAllocated: 6 })],
        running: [run(['n0'], 4, NOW, 60), run(['n1'], 6, NOW, 120)],
        ahead: [{ queue: 'q', nodes: 1, request: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1 }, maxRuntimeSeconds: 30 }],
      }),
      { blockers: [], estimatedStartAtMs: NOW },
    ],
    [
      'one that runs longer is told BACKFILL_WINDOW: when the job ahead starts, and how long it may run to fit',
      snap({
        job: job({ request: { gpus: 4, gpuModel: 'H100', cpuCores: 4, memoryMiB: 1024 }, maxRuntimeSeconds: 61 }),
        nodes: [node('n0', { gpusAllocated: 4 }), node('n1', { gpusAllocated: 6 })],
        running: [run(['n0'], 4, NOW, 60), run(['n1'], 6, NOW, 120)],
        ahead: [{ queue: 'q', nodes: 1, request: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1 }, maxRuntimeSeconds: 30 }],
      }),
      {
        blockers: [
          {
            reason: 'BACKFILL_WINDOW',
            deficit: { gpus: 0, cpuCores: 0, memoryMiB: 0 },
            detail: `the nodes it fits are held for a job ahead, estimated to start at ${new Date(NOW + 60_000).toISOString()}; it may start there now with maxRuntimeSeconds of at most 60 (it has 61)`,
          },
        ],
        wouldStartWith: [],
        estimatedStartAtMs: NOW + 90_000,
      },
    ],
    [
      'with strict backfill (GANTRY_SCHEDULER_BACKFILL=strict), the same job waits for the job ahead to end, and no window is named',
      snap({
        job: job({ request: { gpus: 4, gpuModel: 'H100', cpuCores: 4, memoryMiB: 1024 }, maxRuntimeSeconds: 60 }),
        nodes: [node('n0', { gpusAllocated: 4 }), node('n1', { gpusAllocated: 6 })],
        running: [run(['n0'], 4, NOW, 60), run(['n1'], 6, NOW, 120)],
        ahead: [{ queue: 'q', nodes: 1, request: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1 }, maxRuntimeSeconds: 30 }],
        backfill: 'strict',
      }),
      {
        blockers: [{ reason: 'INSUFFICIENT_CAPACITY', detail: expect.stringContaining('held for a job ahead') }],
        wouldStartWith: [],
        estimatedStartAtMs: NOW + 90_000,
      },
    ],
    [
      'one without maxRuntimeSeconds too',
      snap({
        job: job({ request: { gpus: 4, gpuModel: 'H100', cpuCores: 4, memoryMiB: 1024 } }),
        nodes: [node('n0', { gpusAllocated: 4 }), node('n1', { gpusAllocated: 6 })],
        running: [run(['n0'], 4, NOW, 60), run(['n1'], 6, NOW, 120)],
        ahead: [{ queue: 'q', nodes: 1, request: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1 }, maxRuntimeSeconds: 30 }],
      }),
      { blockers: [{ reason: 'BACKFILL_WINDOW', detail: expect.stringContaining('at most 60 (it has none)') }] },
    ],
    [
      'no window when what runs on the held node has no deadline: nothing this job could change',
      snap({
        job: job({ request: { gpus: 4, gpuModel: 'H100', cpuCores: 4, memoryMiB: 1024 }, maxRuntimeSeconds: 1 }),
        nodes: [node('n0', { gpusAllocated: 4 }), node('n1', { gpusAllocated: 6 })],
        running: [run(['n0'], 4, NOW, null), run(['n1'], 6, NOW, null)],
        ahead: [{ queue: 'q', nodes: 1, request: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1 }, maxRuntimeSeconds: 30 }],
      }),
      { blockers: [], estimatedStartAtMs: null },
    ],
    [
      'jobs ahead go to the fullest node that fits (best fit), leaving the empty one for this job',
      snap({
        nodes: [node('n0'), node('n1', { gpusAllocated: 4 })],
        running: [run(['n1'], 4, NOW, null)],
        ahead: [{ queue: 'q', nodes: 1, request: { gpus: 4, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1 }, maxRuntimeSeconds: null }],
      }),
      { estimatedStartAtMs: NOW },
    ],
  ])('%s', (_n, s, expected) => {
    const e = explainJob(s);
    expect(e).toMatchObject(expected);
    if ('blockers' in expected) expect(e.blockers).toHaveLength((expected.blockers as unknown[]).length);
  });

  it('never estimates a start before now, and a job that would start now is estimated now', () => {
    for (const s of [snap(), snap({ nodes: [full], running: [run(['n0'], 8, 0, 1)] })]) expect(explainJob(s).estimatedStartAtMs).toBe(NOW);
  });
});
