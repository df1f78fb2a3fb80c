import { ResourceRequest } from '../resources/resources';
import { RankEnd, RankRun, estimatedStartMs, fitsBackfillWindow, nodeReadyAtMs, rankEndMs, backfillWindowSeconds } from './backfill-window';
import { PendingJob, PlacementNode, planPlacements } from './placement';

const NOW = 1_000_000;
const S = 1000;

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
const req = (gpus: number): ResourceRequest => ({ gpus, gpuModel: null, cpuCores: 1, memoryMiB: 1024 });
const end = (gpus: number, endsAtMs: number): RankEnd => ({ gpus, cpuCores: 1, memoryMiB: 1024, endsAtMs });
const run = (gpus: number, startedAtMs: number | null, maxRuntimeSeconds: number | null): RankRun => ({
  gpus,
  cpuCores: 1,
  memoryMiB: 1024,
  startedAtMs,
  maxRuntimeSeconds,
});
function job(id: string, gpus: number, maxRuntimeSeconds: number | null = null, nodes = 1, band = 0): PendingJob {
  return { id, nodes, band, resources: req(gpus), maxRuntimeSeconds };
}

describe('rankEndMs', () => {
  it.each<[string, RankRun, number]>([
    ['start plus its limit', run(1, NOW - 10 * S, 60), NOW + 50 * S],
    ['not started yet: counted from now', run(1, null, 60), NOW + 60 * S],
    ['past its limit (the agent is stopping it): now', run(1, NOW - 100 * S, 60), NOW],
    ['no limit: never known', run(1, NOW, null), Number.POSITIVE_INFINITY],
  ])('%s', (_n, r, expected) => expect(rankEndMs(r, NOW)).toBe(expected));
});

describe('nodeReadyAtMs', () => {
  it.each<[string, Partial<PlacementNode>, RankEnd[], number, number]>([
    ['fits now: now', { gpusAllocated: 4 }, [end(4, NOW + 100 * S)], 4, NOW],
    ['the end that frees enough, not the last', { gpusAllocated: 6 }, [end(2, NOW + 300 * S), end(4, NOW + 100 * S)], 6, NOW + 100 * S],
    ['every end when it needs the whole node', { gpusAllocated: 6 }, [end(2, NOW + 300 * S), end(4, NOW + 100 * S)], 8, NOW + 300 * S],
    ['an unknown end it needs: never', { gpusAllocated: 6 }, [end(2, Number.POSITIVE_INFINITY), end(4, NOW + 100 * S)], 8, Number.POSITIVE_INFINITY],
    ['an unknown end it does not need: the known one', { gpusAllocated: 6 }, [end(2, Number.POSITIVE_INFINITY), end(4, NOW + 100 * S)], 6, NOW + 100 * S],
    ['what no rank accounts for never frees', { gpusAllocated: 8 }, [end(4, NOW + 100 * S)], 8, Number.POSITIVE_INFINITY],
  ])('%s', (_n, over, ranks, gpus, expected) => expect(nodeReadyAtMs(node('a', over), ranks, req(gpus), NOW)).toBe(expected));
});

describe('estimatedStartMs', () => {
  const ranks: Record<string, RankEnd[]> = { a: [end(8, NOW + 100 * S)], b: [end(8, NOW + 200 * S)], c: [end(8, Number.POSITIVE_INFINITY)] };
  const full = (id: string) => node(id, { gpusAllocated: 8 });
  it.each<[string, PlacementNode[], number]>([
    ['one node: when it is ready', [full('a')], NOW + 100 * S],
    ['a gang: its last node', [full('a'), full('b')], NOW + 200 * S],
    ['one node of unknown end: unknown', [full('a'), full('c')], Number.POSITIVE_INFINITY],
    ['a node not read: unknown', [full('a'), full('x')], Number.POSITIVE_INFINITY],
    ['a node not read that fits now: now', [node('x')], NOW],
  ])('%s', (_n, nodes, expected) => expect(estimatedStartMs(req(8), nodes, (id) => ranks[id], NOW)).toBe(expected));
});

describe('fitsBackfillWindow', () => {
  it.each<[string, number | null | undefined, number, boolean]>([
    ['ends before the start', 60, NOW + 100 * S, true],
    ['ends exactly at it', 100, NOW + 100 * S, true],
    ['ends after it', 101, NOW + 100 * S, false],
    ['no maxRuntimeSeconds', null, NOW + 100 * S, false],
    ['maxRuntimeSeconds not given', undefined, NOW + 100 * S, false],
    ['an unknown start', 1, Number.POSITIVE_INFINITY, false],
  ])('%s', (_n, max, start, expected) => expect(fitsBackfillWindow(max, NOW, start)).toBe(expected));

  it('says how long a job may run to fit', () => {
    expect(backfillWindowSeconds(NOW, NOW + 100 * S + 999)).toBe(100);
    expect(backfillWindowSeconds(NOW, NOW - S)).toBe(0);
  });
});

describe('planPlacements with runtime backfill', () => {
  // Node a: 4 of 8 GPUs held by a rank that ends in 600 s; b: full, forever. The head wants 8 on one node.
  const nodes = () => [node('a', { gpusAllocated: 4 }), node('b', { gpusAllocated: 8 })];
  const runs = (startedAtMs: number | null = NOW, max: number | null = 600) =>
    new Map<string, RankRun[]>([
      ['a', [run(4, startedAtMs, max)]],
      ['b', [run(8, NOW, null)]],
    ]);
  const plan = (jobs: PendingJob[], r: Map<string, RankRun[]> | null = runs()) => planPlacements(jobs, nodes(), r ? { backfill: { nowMs: NOW, runs: r } } : {});

  it("estimates the head's start from the work on its nodes", () => {
    expect(plan([job('head', 8)]).reservation).toEqual({ jobId: 'head', band: 0, nodeIds: ['a'], estimatedStartMs: NOW + 600 * S });
  });

  it.each<[string, PendingJob, Map<string, RankRun[]> | null, string[] | string]>([
    ['a job that ends before it goes onto the reserved node', job('j', 2, 60), runs(), ['a']],
    ['one that ends exactly at it too', job('j', 2, 600), runs(), ['a']],
    ['one that ends after it waits for the window', job('j', 2, 601), runs(), 'BACKFILL_WINDOW'],
    ['one without maxRuntimeSeconds waits for the window', job('j', 2, null), runs(), 'BACKFILL_WINDOW'],
    ["the estimate counts from the rank's start", job('j', 2, 590), runs(NOW - 20 * S), 'BACKFILL_WINDOW'],
    ['work without maxRuntimeSeconds there: strict, as capacity', job('j', 2, 60), runs(NOW, null), 'INSUFFICIENT_CAPACITY:gpus'],
    ['the reserved node not read: strict', job('j', 2, 60), new Map(), 'INSUFFICIENT_CAPACITY:gpus'],
    ['strict mode: as capacity', job('j', 2, 60), null, 'INSUFFICIENT_CAPACITY:gpus'],
    ['one that would not fit the reserved node anyway: capacity', job('j', 5, 60), runs(), 'INSUFFICIENT_CAPACITY:gpus'],
  ])('%s', (_n, j, r, expected) => {
    const p = plan([job('head', 8), j], r);
    if (typeof expected === 'string') {
      expect(p.placements).toEqual([]);
      expect(p.pending).toEqual([
        { jobId: 'head', reason: 'INSUFFICIENT_CAPACITY:gpus' },
        { jobId: 'j', reason: expected },
      ]);
    } else {
      expect(p.placements.map((x) => x.nodeIds)).toEqual([expected]);
    }
  });

  it('prefers nodes outside the reservation', () => {
    const p = planPlacements([job('head', 8), job('j', 2, 60)], [...nodes(), node('c', { gpusTotal: 4, gpusAllocated: 2 })], {
      backfill: { nowMs: NOW, runs: runs() },
    });
    expect(p.placements.map((x) => [x.jobId, x.nodeIds])).toEqual([['j', ['c']]]);
  });

  it('tells a lower band kept out only by the window BACKFILL_WINDOW, not PRIORITY', () => {
    const p = plan([job('head', 8, null, 1, 5), job('low', 2, null, 1, 0)]);
    expect(p.pending).toContainEqual({ jobId: 'low', reason: 'BACKFILL_WINDOW' });
  });

  it("counts the plan's own placements in the estimate", () => {
    // c is empty: the first job goes there for 300 s; the head (8 GPUs, gang of 2) then reserves a and c.
    const p = planPlacements([job('first', 2, 300), job('head', 8, null, 2), job('j', 1, 250)], [...nodes(), node('c')], {
      backfill: { nowMs: NOW, runs: runs() },
    });
    expect(p.reservation).toMatchObject({ jobId: 'head', nodeIds: ['c', 'a'], estimatedStartMs: NOW + 600 * S });
    expect(p.placements.map((x) => x.jobId)).toEqual(['first', 'j']);
  });

  it('an in-plan placement without maxRuntimeSeconds on a node makes its estimate unknown', () => {
    const p = planPlacements([job('first', 2, null), job('head', 8, null, 2), job('j', 1, 1)], [...nodes(), node('c')], {
      backfill: { nowMs: NOW, runs: runs() },
    });
    expect(p.reservation).toMatchObject({ nodeIds: ['c', 'a'], estimatedStartMs: null });
    expect(p.placements.map((x) => x.jobId)).toEqual(['first']);
  });

  it('lets a gang backfill across reserved and open nodes, never withheld ones', () => {
    const all = [node('a', { gpusAllocated: 4 }), node('b', { gpusAllocated: 4 }), node('c', { gpusAllocated: 8 }), node('d', { gpusAllocated: 6 })];
    const r = new Map<string, RankRun[]>([
      ['a', [run(4, NOW, 600)]],
      ['b', [run(4, NOW, 600)]],
    ]);
    const p = planPlacements([job('head', 8, null, 2), job('g', 2, 60, 3)], all, { backfill: { nowMs: NOW, runs: r } });
    expect(p.reservation?.nodeIds).toEqual(['a', 'b']);
    expect(p.placements.map((x) => [x.jobId, [...x.nodeIds].sort()])).toEqual([['g', ['a', 'b', 'd']]]);
    const held = planPlacements([job('head', 8, null, 2), job('g', 2, 60, 3)], all, { backfill: { nowMs: NOW, runs: r }, withheld: new Set(['d']) });
    expect(held.placements).toEqual([]);
  });

  it('leaves the plan as strict would when nothing has maxRuntimeSeconds, but for the reasons', () => {
    const jobs = [job('head', 8), job('j', 2), job('k', 1)];
    const runtime = plan(jobs);
    const strict = plan(jobs, null);
    expect(runtime.placements).toEqual(strict.placements);
    expect(strict.pending.map((x) => x.reason)).toEqual(['INSUFFICIENT_CAPACITY:gpus', 'INSUFFICIENT_CAPACITY:gpus', 'INSUFFICIENT_CAPACITY:gpus']);
    expect(runtime.pending.map((x) => x.reason)).toEqual(['INSUFFICIENT_CAPACITY:gpus', 'BACKFILL_WINDOW', 'BACKFILL_WINDOW']);
  });
});
