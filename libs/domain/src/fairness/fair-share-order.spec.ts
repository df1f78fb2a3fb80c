import fc from 'fast-check';
import { FairShareInput, FairShareStanding } from './fair-share';
import { ClusterCapacity, QueueShareState, QueuedJob, orderByPolicy } from './queue-order';
import { decayUsage, decayedGpuSeconds } from './usage-decay';

/* orderByPolicy with decayed fair share (ADR 0038): the order inside a band. */

const total: ClusterCapacity = { gpus: 100, cpuCores: 1000, memoryMiB: 1_000_000 };
const queue = (name: string, over: Partial<QueueShareState> = {}): QueueShareState => ({
  name,
  priority: 0,
  weight: 1,
  quotaGpus: null,
  held: { gpus: 0, cpuCores: 0, memoryMiB: 0 },
  ...over,
});
const job = (id: string, q: string, owner = 'u', gpus = 1, nodes = 1): QueuedJob => ({
  id,
  queue: q,
  owner,
  nodes,
  resources: { gpus, gpuModel: null, cpuCores: 1, memoryMiB: 1 },
});
const ids = (jobs: QueuedJob[]) => jobs.map((j) => j.id);
/** usage[queue][owner] = [decayed GPU-seconds, GPUs held]. */
const fair = (usage: Record<string, Record<string, [number, number]>>, horizonSeconds = 100): FairShareInput => ({
  horizonSeconds,
  usage: new Map(Object.entries(usage).map(([q, owners]) => [q, new Map(Object.entries(owners).map(([o, [u, g]]) => [o, { usage: u, gpus: g }]))])),
});

describe('orderByPolicy with decayed fair share', () => {
  it.each([
    {
      name: 'the queue with less decayed usage goes first, though it holds more now (DRF would pick b)',
      jobs: [job('a1', 'a'), job('a2', 'a'), job('b1', 'b')],
      queues: [queue('a', { held: { gpus: 10, cpuCores: 0, memoryMiB: 0 } }), queue('b')],
      usage: fair({ a: { u: [0, 0] }, b: { u: [100_000, 0] } }),
      order: ['a1', 'a2', 'b1'],
    },
    {
      name: 'usage over weight: twice the usage at twice the weight ties, so the name decides',
      jobs: [job('b1', 'b'), job('a1', 'a')],
      queues: [queue('a'), queue('b', { weight: 2 })],
      usage: fair({ a: { u: [1000, 0] }, b: { u: [2000, 0] } }, 0),
      order: ['a1', 'b1'],
    },
    {
      name: 'each pick is charged its GPUs x the horizon: equal queues alternate',
      jobs: [job('a1', 'a'), job('a2', 'a'), job('a3', 'a'), job('b1', 'b'), job('b2', 'b'), job('b3', 'b')],
      queues: [queue('a'), queue('b')],
      usage: fair({}),
      order: ['a1', 'b1', 'a2', 'b2', 'a3', 'b3'],
    },
    {
      name: 'a queue 250 GPU-seconds behind takes three 1-GPU picks (horizon 100 s) before the other gets one',
      jobs: [job('a1', 'a'), job('a2', 'a'), job('a3', 'a'), job('a4', 'a'), job('b1', 'b'), job('b2', 'b')],
      queues: [queue('a'), queue('b')],
      usage: fair({ b: { u: [250, 0] } }),
      order: ['a1', 'a2', 'a3', 'b1', 'a4', 'b2'],
    },
    {
      name: 'GPUs held now count: a queue holding 5 GPUs waits until the other holds more',
      jobs: [job('a1', 'a'), ...[1, 2, 3, 4].map((i) => job(`b${i}`, 'b', 'u', 2))],
      queues: [queue('a'), queue('b')],
      usage: fair({ a: { u: [0, 5] } }),
      order: ['b1', 'b2', 'b3', 'a1', 'b4'],
    },
    {
      name: 'inside a queue, owners by their usage, FIFO within an owner',
      jobs: [job('x1', 'q', 'x'), job('x2', 'q', 'x'), job('y1', 'q', 'y'), job('y2', 'q', 'y')],
      queues: [queue('q')],
      usage: fair({ q: { x: [1000, 0], y: [0, 0] } }, 0),
      order: ['y1', 'y2', 'x1', 'x2'],
    },
    {
      name: 'owners of equal usage alternate by the horizon charge',
      jobs: [job('x1', 'q', 'x'), job('x2', 'q', 'x'), job('y1', 'q', 'y'), job('y2', 'q', 'y')],
      queues: [queue('q')],
      usage: fair({}),
      order: ['x1', 'y1', 'x2', 'y2'],
    },
    {
      name: "the queue's ownerWeights: y of weight 3 gets three picks to x's one",
      jobs: [job('x1', 'q', 'x'), job('x2', 'q', 'x'), ...[1, 2, 3, 4].map((i) => job(`y${i}`, 'q', 'y'))],
      queues: [queue('q', { ownerWeights: { y: 3 } })],
      usage: fair({}),
      order: ['x1', 'y1', 'y2', 'y3', 'x2', 'y4'],
    },
    {
      name: 'bands stay strict: a high band with large usage still goes first',
      jobs: [job('low1', 'low'), job('high1', 'high')],
      queues: [queue('low'), queue('high', { priority: 10 })],
      usage: fair({ high: { u: [1e9, 50] } }),
      order: ['high1', 'low1'],
    },
    {
      name: 'jobs without GPUs move no key: weighted DRF breaks the tie',
      jobs: [job('a1', 'a', 'u', 0), job('a2', 'a', 'u', 0), job('b1', 'b', 'u', 0), job('b2', 'b', 'u', 0)],
      queues: [queue('a'), queue('b')],
      usage: fair({}),
      order: ['a1', 'b1', 'a2', 'b2'],
    },
  ])('$name', ({ jobs, queues, usage, order }) => {
    expect(ids(orderByPolicy(jobs, queues, total, 100, usage).ordered)).toEqual(order);
  });

  it('without fair share (drf), owners do not reorder a queue: FIFO, as before', () => {
    const r = orderByPolicy([job('x1', 'q', 'x'), job('y1', 'q', 'y'), job('x2', 'q', 'x')], [queue('q')], total, 100);
    expect(ids(r.ordered)).toEqual(['x1', 'y1', 'x2']);
  });

  it('still holds a job past its quota and considers the next', () => {
    const r = orderByPolicy([job('big', 'q', 'u', 8), job('small', 'q', 'u', 2)], [queue('q', { quotaGpus: 4 })], total, 100, fair({}));
    expect(ids(r.ordered)).toEqual(['small']);
    expect(r.held).toEqual([{ jobId: 'big', reason: 'QUOTA_EXCEEDED' }]);
  });

  it('looks at most `lookahead` jobs deep per queue, whoever owns them', () => {
    const r = orderByPolicy([job('x1', 'q', 'x'), job('x2', 'q', 'x'), job('y1', 'q', 'y')], [queue('q')], total, 2, fair({ q: { x: [1000, 0] } }));
    expect(ids(r.ordered)).toEqual(['x1', 'x2']);
  });

  const arbJobs = fc.array(fc.record({ q: fc.constantFrom('a', 'b', 'c'), o: fc.constantFrom('x', 'y', 'z'), g: fc.integer({ min: 0, max: 8 }) }), {
    maxLength: 40,
  });
  const arbUsage = fc.dictionary(
    fc.constantFrom('a', 'b', 'c'),
    fc.dictionary(fc.constantFrom('x', 'y', 'z'), fc.tuple(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.integer({ min: 0, max: 64 }))),
  );

  it('orders every job in the lookahead exactly once, FIFO within an owner (property)', () => {
    fc.assert(
      fc.property(arbJobs, arbUsage, fc.integer({ min: 1, max: 50 }), (spec, usage, lookahead) => {
        const jobs = spec.map((s, i) => job(`j${i}`, s.q, s.o, s.g));
        const r = orderByPolicy(jobs, [queue('a'), queue('b', { weight: 2 }), queue('c', { priority: 5 })], total, lookahead, fair(usage));
        const window = ['a', 'b', 'c'].flatMap((q) => jobs.filter((j) => j.queue === q).slice(0, lookahead));
        expect(new Set(ids(r.ordered))).toEqual(new Set(ids(window)));
        expect(r.ordered).toHaveLength(window.length);
        for (const q of ['a', 'b', 'c']) {
          for (const o of ['x', 'y', 'z']) {
            const mine = ids(r.ordered.filter((j) => j.queue === q && j.owner === o));
            expect(mine).toEqual(ids(window.filter((j) => j.queue === q && j.owner === o)));
          }
        }
      }),
    );
  });
});

/**
 * A fleet of 1-GPU slots, every queue backlogged with jobs of random runtimes, each second the free
 * slots going to the first jobs of orderByPolicy's order, usage decaying as the scheduler reads it.
 * Returns each queue's GPU-seconds per second, second by second.
 */
function simulate(opts: {
  gpus: number;
  weights: number[];
  history: number[];
  halfLifeS: number;
  seconds: number;
  runtimes: number[];
  gangs: number[];
}): number[][] {
  const names = opts.weights.map((_, i) => `q${i}`);
  const queues = names.map((n, i) => queue(n, { weight: opts.weights[i] }));
  const usage = names.map((_, i) => opts.history[i]);
  const running: Array<{ q: number; gpus: number; endsAt: number }> = [];
  let seq = 0;
  let draw = 0;
  const perSecond: number[][] = [];
  for (let t = 0; t < opts.seconds; t++) {
    for (let i = running.length - 1; i >= 0; i--) if (running[i].endsAt <= t) running.splice(i, 1);
    const held = names.map((_, q) => running.filter((r) => r.q === q).reduce((s, r) => s + r.gpus, 0));
    let free = opts.gpus - held.reduce((a, b) => a + b, 0);
    const jobs = names.flatMap((n, q) =>
      Array.from({ length: opts.gpus }, () => {
        const gpus = opts.gangs[(q + draw++) % opts.gangs.length];
        return job(`j${seq++}`, n, 'u', gpus);
      }),
    );
    const input: FairShareInput = {
      horizonSeconds: opts.halfLifeS / 8,
      usage: new Map(names.map((n, q) => [n, new Map<string, FairShareStanding>([['u', { usage: usage[q], gpus: held[q] }]])])),
    };
    const order = orderByPolicy(
      jobs,
      queues.map((qq, q) => ({ ...qq, held: { gpus: held[q], cpuCores: 0, memoryMiB: 0 } })),
      total,
      opts.gpus,
      input,
    ).ordered;
    // Strict order, as the reservation makes it: the first job that does not fit waits for room, and nothing behind it starts.
    for (const j of order) {
      if (j.resources.gpus > free) break;
      free -= j.resources.gpus;
      running.push({ q: names.indexOf(j.queue), gpus: j.resources.gpus, endsAt: t + opts.runtimes[draw++ % opts.runtimes.length] });
    }
    const now = names.map((_, q) => running.filter((r) => r.q === q).reduce((s, r) => s + r.gpus, 0));
    perSecond.push(now);
    for (let q = 0; q < names.length; q++) usage[q] = decayUsage(usage[q], 0, 1000, opts.halfLifeS) + decayedGpuSeconds(now[q], 0, 1000, 1000, opts.halfLifeS);
  }
  return perSecond;
}

describe('decayed fair share over time (simulated, property)', () => {
  const arbRun = fc.record({
    weights: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 2, maxLength: 4 }),
    historyHalfLives: fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { minLength: 4, maxLength: 4 }),
    runtimes: fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 8 }),
    gangs: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 }),
  });
  const gpus = 16;
  const halfLifeS = 100;

  it("each queue's share of GPU-seconds converges to its weight's share when all are backlogged", () => {
    fc.assert(
      fc.property(arbRun, (r) => {
        // Histories up to 3 half-lives of the whole fleet: settled after some half-lives more.
        const history = r.weights.map((_, i) => r.historyHalfLives[i] * gpus * halfLifeS);
        const perSecond = simulate({ gpus, weights: r.weights, history, halfLifeS, seconds: 10 * halfLifeS, runtimes: r.runtimes, gangs: r.gangs });
        const tail = perSecond.slice(6 * halfLifeS);
        const used = r.weights.map((_, q) => tail.reduce((s, row) => s + row[q], 0));
        const all = used.reduce((a, b) => a + b, 0);
        const weights = r.weights.reduce((a, b) => a + b, 0);
        // Within 10 % of its share, plus one gang held one runtime longer than its due: shares move in
        // whole gangs, so a queue due half a gang is ahead or behind by a gang-run whatever the policy.
        const gangRun = (Math.max(...r.gangs) * Math.max(...r.runtimes)) / all;
        r.weights.forEach((w, q) => expect(Math.abs(used[q] / all - w / weights)).toBeLessThan(0.1 * (w / weights) + gangRun));
      }),
      {
        numRuns: 10,
        // Seen in CI: the weight-1 queue, due half a 4-GPU gang, off by exactly 10 % of its share.
        examples: [[{ weights: [2, 1, 2, 3], historyHalfLives: [6e-323, 0, 0, 0], runtimes: [7, 1, 19, 1, 13], gangs: [4] }]],
      },
    );
  });

  it('no queue starves: one with a large past is served within a few half-lives', () => {
    fc.assert(
      fc.property(arbRun, fc.double({ min: 1, max: 20, noNaN: true }), (r, pastHalfLives) => {
        const history = r.weights.map((_, i) => (i === 0 ? pastHalfLives * gpus * halfLifeS : 0));
        const perSecond = simulate({ gpus, weights: r.weights, history, halfLifeS, seconds: 8 * halfLifeS, runtimes: r.runtimes, gangs: r.gangs });
        r.weights.forEach((_, q) => expect(perSecond.some((row) => row[q] > 0)).toBe(true));
      }),
      { numRuns: 10 },
    );
  });
});
