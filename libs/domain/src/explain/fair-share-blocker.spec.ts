import { ExplainFairShare, FairShareRival, fairShareBlockerDetail } from './fair-share-blocker';
import { ExplainNode, ExplainSnapshot, explainJob } from './job-explain';

const rival = (name: string, usageHours: number, over: Partial<FairShareRival> = {}): FairShareRival => ({
  name,
  weight: 1,
  standing: { usage: usageHours * 3600, gpus: 0 },
  waiting: true,
  ...over,
});
const fs = (over: Partial<ExplainFairShare> = {}): ExplainFairShare => ({
  horizonSeconds: 3600,
  queues: [rival('q', 10)],
  owner: 'me',
  owners: [rival('me', 10)],
  ...over,
});

describe('fairShareBlockerDetail', () => {
  it.each<[string, ExplainFairShare, string | null]>([
    ['alone in its band and queue: none ahead', fs(), null],
    [
      'a waiting queue of the band with less usage is ahead, with both keys',
      fs({ queues: [rival('q', 10), rival('b', 2)] }),
      'served first by fair share, in decayed GPU-hours per unit of weight: queue b (2) ahead of queue q (10)',
    ],
    ['a queue with less usage that waits for nothing is not ahead', fs({ queues: [rival('q', 10), rival('b', 2, { waiting: false })] }), null],
    ['a queue with more usage is behind', fs({ queues: [rival('q', 10), rival('b', 20)] }), null],
    [
      'weight divides: 16 GPU-hours at weight 4 is ahead of 10 at weight 1',
      fs({ queues: [rival('q', 10), rival('b', 16, { weight: 4 })] }),
      'served first by fair share, in decayed GPU-hours per unit of weight: queue b (4) ahead of queue q (10)',
    ],
    [
      'GPUs held count over the horizon: 2 GPUs for an hour make 2 GPU-hours',
      fs({ queues: [rival('q', 3), rival('b', 0, { standing: { usage: 0, gpus: 2 } })] }),
      'served first by fair share, in decayed GPU-hours per unit of weight: queue b (2) ahead of queue q (3)',
    ],
    [
      'owners of its queue too, lowest first, at most three named',
      fs({ owners: [rival('me', 10), rival('e', 5), rival('d', 4), rival('c', 3), rival('b', 2)] }),
      'served first by fair share, in decayed GPU-hours per unit of weight: owner b (2), owner c (3), owner d (4) and 1 more ahead of owner me (10)',
    ],
    [
      'queue and owner both',
      fs({ queues: [rival('q', 10), rival('b', 0)], owners: [rival('me', 10), rival('x', 1)] }),
      'served first by fair share, in decayed GPU-hours per unit of weight: queue b (0) ahead of queue q (10); owner x (1) ahead of owner me (10)',
    ],
  ])('%s', (_name, input, expected) => expect(fairShareBlockerDetail(input, 'q')).toBe(expected));
});

describe('explainJob: FAIR_SHARE', () => {
  const node = (over: Partial<ExplainNode> = {}): ExplainNode => ({
    id: 'n0',
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
  const snap = (nodes: ExplainNode[], fairShare?: ExplainFairShare): ExplainSnapshot => ({
    nowMs: 1_000_000,
    nodes,
    running: [],
    aheadInQueue: 0,
    aheadOverall: 0,
    ahead: [],
    fairShare,
    job: {
      queue: 'q',
      nodes: 1,
      request: { gpus: 8, gpuModel: 'H100', cpuCores: 4, memoryMiB: 1024 },
      pendingReason: null,
      depsPending: 0,
      notBeforeMs: null,
      maxRuntimeSeconds: null,
    },
    queues: [
      { name: 'q', priority: 0, quotaGpus: null, heldGpus: 0 },
      { name: 'b', priority: 0, quotaGpus: null, heldGpus: 0 },
    ],
  });
  const ahead = fs({ queues: [rival('q', 10), rival('b', 2)] });
  it.each<[string, ExplainSnapshot, string[]]>([
    [
      'waiting for capacity with a queue ahead: FAIR_SHARE after INSUFFICIENT_CAPACITY',
      snap([node({ gpusAllocated: 8 })], ahead),
      ['INSUFFICIENT_CAPACITY', 'FAIR_SHARE'],
    ],
    ['placeable now: nothing blocks it, whoever is ahead', snap([node()], ahead), []],
    ['no node could ever hold it: fair share would not help', snap([node({ gpusTotal: 4 })], ahead), ['NO_MATCHING_NODES']],
    ['waiting for capacity, nobody ahead', snap([node({ gpusAllocated: 8 })], fs()), ['INSUFFICIENT_CAPACITY']],
    ['not told of fair share', snap([node({ gpusAllocated: 8 })]), ['INSUFFICIENT_CAPACITY']],
  ])('%s', (_name, s, reasons) => {
    const e = explainJob(s);
    expect(e.blockers.map((b) => b.reason)).toEqual(reasons);
    if (reasons.includes('FAIR_SHARE')) expect(e.blockers.find((b) => b.reason === 'FAIR_SHARE')!.detail).toContain('queue b (2) ahead of queue q (10)');
  });
});
