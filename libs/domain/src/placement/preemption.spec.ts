import fc from 'fast-check';
import { PlacementNode } from './schedulable';
import { Preemptor, PreemptibleAttempt, choosePreemptionVictims, preemptible, preemptionFleet } from './preemption';

const NOW = 1_000_000;
const COOLDOWN = 60_000;

function node(id: string, gpusAllocated = 8, over: Partial<PlacementNode> = {}): PlacementNode {
  return {
    id,
    rack: 'r1',
    health: 'HEALTHY',
    cordoned: false,
    version: 1,
    gpuModel: 'H100',
    gpusTotal: 8,
    gpusAllocated,
    cpuCores: 64,
    cpuAllocated: 0,
    memoryMiB: 65_536,
    memoryAllocated: 0,
    ...over,
  };
}
function run(jobId: string, nodeIds: string[], gpus: number, band = 0, over: Partial<PreemptibleAttempt> = {}): PreemptibleAttempt {
  return { jobId, attempt: 1, band, nodeIds, perNode: { gpus, cpuCores: 0, memoryMiB: 0 }, lastPreemptedAtMs: null, preempting: false, ...over };
}
function wants(gpus: number, nodes = 1, band = 10): Preemptor {
  return { id: 'p', band, nodes, resources: { gpus, gpuModel: null, cpuCores: 1, memoryMiB: 1 } };
}

describe('choosePreemptionVictims', () => {
  it.each<[string, Preemptor, PlacementNode[], PreemptibleAttempt[], string[] | null]>([
    ['ends the one job whose GPUs make it fit', wants(4), [node('a')], [run('x', ['a'], 4), run('y', ['a'], 4)], ['x']],
    ['fewest GPUs: one 2-GPU job over a 4-GPU one', wants(2), [node('a')], [run('big', ['a'], 4), run('small', ['a'], 2), run('s2', ['a'], 2)], ['s2']],
    ['fewest GPUs across nodes', wants(4), [node('a'), node('b')], [run('a8', ['a'], 8), run('b4', ['b'], 4), run('b4b', ['b'], 4)], ['b4']],
    ['uses what is free first', wants(4), [node('a', 6)], [run('x', ['a'], 4), run('y', ['a'], 2)], ['y']],
    ['never an equal band', wants(4, 1, 0), [node('a')], [run('x', ['a'], 4), run('y', ['a'], 4)], null],
    ['never a higher band', wants(4, 1, 5), [node('a')], [run('x', ['a'], 8, 7)], null],
    ['not within the cooldown', wants(4), [node('a')], [run('x', ['a'], 8, 0, { lastPreemptedAtMs: NOW - 1 })], null],
    ['again after the cooldown', wants(4), [node('a')], [run('x', ['a'], 8, 0, { lastPreemptedAtMs: NOW - COOLDOWN })], ['x']],
    ['not one already stopping for another', wants(4), [node('a')], [run('x', ['a'], 8, 0, { preempting: true })], null],
    ['nothing when it fits already', wants(4), [node('a', 4)], [run('x', ['a'], 4)], null],
    ['a withheld node is no room for it: another is freed', wants(4), [node('w', 0), node('a')], [run('x', ['a'], 4)], ['x']],
    ['nor a place to find victims', wants(4), [node('w')], [run('x', ['w'], 8)], null],
    [
      'a gang victim costs all its ranks: a lone job on the other node is cheaper',
      wants(4),
      [node('a'), node('b')],
      [run('gang', ['a', 'b'], 4), run('ga', ['a'], 4, 20), run('lone', ['b'], 4)],
      ['lone'],
    ],
    [
      'a gang preemptor frees two nodes',
      wants(8, 2),
      [node('a'), node('b'), node('c')],
      [run('x', ['a'], 8), run('y', ['b'], 8), run('z', ['c'], 8, 20)],
      ['x', 'y'],
    ],
    ['a gang preemptor shares one gang victim between its nodes', wants(8, 2), [node('a'), node('b')], [run('g', ['a', 'b'], 8)], ['g']],
    ['a gang preemptor with too few nodes', wants(8, 2), [node('a'), node('b')], [run('x', ['a'], 8), run('y', ['b'], 8, 20)], null],
    ['skips cordoned nodes', wants(4), [node('a', 8, { cordoned: true })], [run('x', ['a'], 8)], null],
    [
      'skips nodes of another model',
      { ...wants(4), resources: { gpus: 4, gpuModel: 'A100', cpuCores: 1, memoryMiB: 1 } },
      [node('a')],
      [run('x', ['a'], 8)],
      null,
    ],
    [
      'CPU too: ends a job holding cores',
      { ...wants(0), resources: { gpus: 0, gpuModel: null, cpuCores: 32, memoryMiB: 1 } },
      [node('a', 0, { cpuAllocated: 64 })],
      [{ ...run('cpu', ['a'], 0), perNode: { gpus: 0, cpuCores: 64, memoryMiB: 0 } }],
      ['cpu'],
    ],
  ])('%s', (_name, preemptor, nodes, running, expected) => {
    const choice = choosePreemptionVictims({ preemptor, nodes, running, nowMs: NOW, cooldownMs: COOLDOWN, withheld: new Set(['w']) });
    expect(choice?.victims.map((v) => v.jobId) ?? null).toEqual(expected);
  });

  it('names the nodes it will fit on and the GPUs it ends', () => {
    const choice = choosePreemptionVictims({
      preemptor: wants(8, 2),
      nodes: [node('a'), node('b')],
      running: [run('g', ['a', 'b'], 8)],
      nowMs: NOW,
      cooldownMs: COOLDOWN,
    });
    expect(choice).toEqual({ victims: [{ jobId: 'g', attempt: 1 }], nodeIds: ['a', 'b'], gpus: 16 });
  });
});

/** A small fleet of 8-GPU nodes filled by single-node and gang attempts of random bands. */
const fleetArb = fc
  .integer({ min: 1, max: 4 })
  .chain((count) =>
    fc.record({
      count: fc.constant(count),
      jobs: fc.array(
        fc.record({
          node: fc.integer({ min: 0, max: count - 1 }),
          span: fc.integer({ min: 1, max: 2 }),
          gpus: fc.integer({ min: 1, max: 4 }),
          band: fc.integer({ min: 0, max: 3 }),
          cooled: fc.integer({ min: 0, max: 4 }).map((x) => x > 0),
          preempting: fc.integer({ min: 0, max: 4 }).map((x) => x === 0),
        }),
        { minLength: 2, maxLength: 10 },
      ),
      want: fc.integer({ min: 1, max: 8 }),
      gang: fc.integer({ min: 1, max: 2 }),
      band: fc.integer({ min: 0, max: 4 }),
    }),
  )
  .map((r) => {
    const used = new Array(r.count).fill(0);
    const running: PreemptibleAttempt[] = [];
    r.jobs.forEach((j, i) => {
      const ids = Array.from({ length: Math.min(j.span, r.count) }, (_, k) => (j.node + k) % r.count);
      if (ids.some((n) => used[n] + j.gpus > 8)) return;
      for (const n of ids) used[n] += j.gpus;
      running.push(
        run(
          `j${i}`,
          ids.map((n) => `n${n}`),
          j.gpus,
          j.band,
          { lastPreemptedAtMs: j.cooled ? null : NOW - 1, preempting: j.preempting },
        ),
      );
    });
    const nodes = used.map((u, i) => node(`n${i}`, u));
    return { nodes, running, preemptor: wants(r.want, r.gang, r.band) };
  });

/** Every subset of the attempts allowed to end, smallest GPU total that makes `nodes` nodes fit. */
function bruteForceFewest(nodes: PlacementNode[], running: PreemptibleAttempt[], p: Preemptor): number | null {
  const allowed = running.filter((v) => preemptible(v, p.band, NOW, COOLDOWN));
  let best: number | null = null;
  for (let mask = 0; mask < 1 << allowed.length; mask++) {
    const chosen = allowed.filter((_, i) => mask & (1 << i));
    const fitting = nodes.filter((n) => {
      const freed = chosen.filter((v) => v.nodeIds.includes(n.id)).reduce((s, v) => s + v.perNode.gpus, 0);
      return n.gpusTotal - n.gpusAllocated + freed >= p.resources.gpus;
    });
    if (fitting.length < p.nodes) continue;
    const cost = chosen.reduce((s, v) => s + v.perNode.gpus * v.nodeIds.length, 0);
    if (best === null || cost < best) best = cost;
  }
  return best;
}

describe('choosePreemptionVictims (properties)', () => {
  it('the victims make it fit, are all of strictly lower bands, out of cooldown, not already stopping, and ended whole', () => {
    fc.assert(
      fc.property(fleetArb, ({ nodes, running, preemptor }) => {
        const choice = choosePreemptionVictims({ preemptor, nodes, running, nowMs: NOW, cooldownMs: COOLDOWN });
        if (!choice) return;
        const byId = new Map(running.map((v) => [v.jobId, v]));
        const victims = choice.victims.map((v) => byId.get(v.jobId)!);
        for (const v of victims) {
          expect(v.band).toBeLessThan(preemptor.band);
          expect(v.preempting).toBe(false);
          expect(v.lastPreemptedAtMs === null || NOW - v.lastPreemptedAtMs >= COOLDOWN).toBe(true);
        }
        expect(choice.nodeIds).toHaveLength(preemptor.nodes);
        for (const id of choice.nodeIds) {
          const n = nodes.find((x) => x.id === id)!;
          const freed = victims.filter((v) => v.nodeIds.includes(id)).reduce((s, v) => s + v.perNode.gpus, 0);
          expect(n.gpusTotal - n.gpusAllocated + freed).toBeGreaterThanOrEqual(preemptor.resources.gpus);
        }
        // Whole gangs: the GPUs counted are every rank's.
        expect(choice.gpus).toBe(victims.reduce((s, v) => s + v.perNode.gpus * v.nodeIds.length, 0));
      }),
      { numRuns: 500 },
    );
  });

  it('a single-node job ends the fewest GPUs any allowed set could, and finds one whenever one exists', () => {
    fc.assert(
      fc.property(fleetArb, ({ nodes, running, preemptor: p }) => {
        const preemptor = { ...p, nodes: 1 };
        const choice = choosePreemptionVictims({ preemptor, nodes, running, nowMs: NOW, cooldownMs: COOLDOWN });
        const best = bruteForceFewest(nodes, running, preemptor);
        if (best === null || best === 0) expect(choice).toBeNull();
        else expect(choice?.gpus).toBe(best);
      }),
      { numRuns: 500 },
    );
  });

  it('one fleet built for a cycle answers every preemptor as a search of its own would, as victims are promised', () => {
    fc.assert(
      fc.property(fleetArb, fc.integer({ min: 1, max: 4 }), ({ nodes, running, preemptor }, count) => {
        const shared = running.map((v) => ({ ...v }));
        const fleet = preemptionFleet(nodes, shared);
        for (let i = 0; i < count; i++) {
          const p = { ...preemptor, id: `p${i}` };
          const alone = choosePreemptionVictims({ preemptor: p, nodes, running: shared.map((v) => ({ ...v })), nowMs: NOW, cooldownMs: COOLDOWN });
          expect(choosePreemptionVictims({ preemptor: p, nodes, running: shared, nowMs: NOW, cooldownMs: COOLDOWN, fleet })).toEqual(alone);
          // As the step does: what this preemptor ends is promised to it.
          for (const v of shared) if (alone?.victims.some((c) => c.jobId === v.jobId)) v.preempting = true;
        }
      }),
      { numRuns: 300 },
    );
  });
});
