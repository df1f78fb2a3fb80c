import fc from 'fast-check';
import { NodeCapacity, allocate, fitsNow, ResourceRequest } from '../resources/resources';
import { FitIndex, GangCandidates, PendingJob, PlacementNode, PlanOptions, planPlacements } from './placement';

/** The invariant the property test checks: no allocation past a node's capacity, none below zero. */
function isOverCommitted(node: NodeCapacity): boolean {
  return [
    [node.gpusAllocated, node.gpusTotal],
    [node.cpuAllocated, node.cpuCores],
    [node.memoryAllocated, node.memoryMiB],
  ].some(([used, total]) => used > total || used < 0);
}

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
function job(id: string, res: Partial<ResourceRequest> = {}, nodes = 1, band = 0): PendingJob {
  return { id, nodes, band, resources: { gpus: 1, gpuModel: null, cpuCores: 1, memoryMiB: 1024, ...res } };
}

describe('planPlacements', () => {
  it('hands back the nodes it placed onto as its placements left them, and only those', () => {
    const plan = planPlacements([job('j', { gpus: 3 }), job('k', { gpus: 1 })], [node('a', { gpusAllocated: 4 }), node('b', { gpusAllocated: 8 }), node('c')]);
    expect(plan.placements.map((p) => p.nodeIds)).toEqual([['a'], ['a']]); // best fit: both on the fuller node
    expect([...plan.after.keys()]).toEqual(['a']);
    expect(plan.after.get('a')).toMatchObject({ gpusAllocated: 8, cpuAllocated: 2 });
  });

  it.each<[string, PlacementNode[], PendingJob, string[] | string]>([
    ['fits on the only node', [node('a')], job('j'), ['a']],
    ['best fit picks the fuller node', [node('a'), node('b', { gpusAllocated: 6 })], job('j', { gpus: 2 }), ['b']],
    ['skips a DEGRADED node', [node('a', { health: 'DEGRADED' }), node('b')], job('j'), ['b']],
    ['skips an UNHEALTHY node', [node('a', { health: 'UNHEALTHY' })], job('j'), 'INSUFFICIENT_CAPACITY:gpus'],
    ['skips a cordoned node', [node('a', { cordoned: true }), node('b')], job('j'), ['b']],
    ['matches the GPU model', [node('a', { gpuModel: 'A100' }), node('b')], job('j', { gpuModel: 'H100' }), ['b']],
    ['no node has the model', [node('a', { gpuModel: 'A100' })], job('j', { gpuModel: 'H100' }), 'NO_MATCHING_NODES'],
    ['too many GPUs for any node', [node('a')], job('j', { gpus: 16 }), 'NO_MATCHING_NODES'],
    ['gpus 0 ignores the model', [node('a', { gpuModel: null, gpusTotal: 0 })], job('j', { gpus: 0, gpuModel: 'H100' }), ['a']],
    ['CPU is short now', [node('a', { cpuAllocated: 64 })], job('j'), 'INSUFFICIENT_CAPACITY:cpuCores'],
    ['memory is short now', [node('a', { memoryAllocated: 524288 })], job('j'), 'INSUFFICIENT_CAPACITY:memoryMiB'],
    ['gang on one rack', [node('a', { rack: 'r1' }), node('b', { rack: 'r2' }), node('c', { rack: 'r2' })], job('j', {}, 2), ['b', 'c']],
    ['gang across racks when none holds it', [node('a', { rack: 'r1' }), node('b', { rack: 'r2' })], job('j', {}, 2), ['a', 'b']],
    ['gang larger than the fleet', [node('a')], job('j', {}, 2), 'NO_MATCHING_NODES'],
    ['gang waiting for a busy node', [node('a'), node('b', { gpusAllocated: 8 })], job('j', {}, 2), 'GANG_WAITING'],
  ])('%s', (_name, nodes, j, expected) => {
    const plan = planPlacements([j], nodes);
    if (typeof expected === 'string') {
      expect(plan.placements).toEqual([]);
      expect(plan.pending).toEqual([{ jobId: j.id, reason: expected }]);
    } else {
      expect(plan.pending).toEqual([]);
      expect(plan.placements.map((p) => ({ jobId: p.jobId, nodeIds: p.nodeIds }))).toEqual([{ jobId: j.id, nodeIds: expected }]);
    }
  });

  it.each<[string, PlacementNode[], PendingJob, string[] | string]>([
    [
      'a job goes past the node it failed to start on, to the next best fit',
      [node('a', { gpusAllocated: 6 }), node('b')],
      { ...job('j'), avoidNodeIds: ['a'] },
      ['b'],
    ],
    [
      'but back on it when nothing else fits: a preference, never a wait',
      [node('a', { gpusAllocated: 6 }), node('b', { gpusAllocated: 8 })],
      { ...job('j'), avoidNodeIds: ['a'] },
      ['a'],
    ],
    [
      'a gang keeps to the racks without it when they hold the gang',
      [node('a', { rack: 'r1' }), node('b', { rack: 'r1' }), node('c', { rack: 'r2' }), node('d', { rack: 'r2' }), node('e', { rack: 'r2' })],
      { ...job('g', {}, 2), avoidNodeIds: ['b'] },
      ['c', 'd'],
    ],
    [
      'a gang uses it when the fleet has no other way',
      [node('a', { rack: 'r1' }), node('b', { rack: 'r1' })],
      { ...job('g', {}, 2), avoidNodeIds: ['b'] },
      ['a', 'b'],
    ],
    ['avoiding a node it would not have chosen changes nothing', [node('a', { gpusAllocated: 6 }), node('b')], { ...job('j'), avoidNodeIds: ['b'] }, ['a']],
  ])('nodes a job failed to start on (ADR 0035): %s', (_name, nodes, j, expected) => {
    const plan = planPlacements([j], nodes);
    expect(plan.pending).toEqual([]);
    expect(plan.placements.map((p) => p.nodeIds)).toEqual([expected]);
  });

  it.each<[string, PendingJob, string[] | string]>([
    ['a single job skips a withheld node', job('j', { gpus: 4 }), ['b']],
    ['a gang skips a withheld node', job('g', { gpus: 4 }, 2), ['b', 'c']],
    ['waits when only a withheld node has room', job('big', { gpus: 8 }), 'INSUFFICIENT_CAPACITY:gpus'],
  ])('withheld nodes (preempted attempts still stopping there): %s', (_name, j, expected) => {
    const nodes = [node('a'), node('b', { gpusAllocated: 4 }), node('c', { gpusAllocated: 4 })];
    const index = new FitIndex(nodes);
    const gangs = new GangCandidates(index);
    const plan = planPlacements([j], nodes, { withheld: new Set(['a']), index, gangs });
    if (typeof expected === 'string') expect(plan.pending).toEqual([{ jobId: j.id, reason: expected }]);
    else expect(plan.placements[0].nodeIds.sort()).toEqual(expected);
    // The caller's index and gang candidates are given back as they were: the next plan may use the node.
    expect(planPlacements([job('after', { gpus: 8 })], nodes, { index, gangs }).placements[0].nodeIds).toEqual(['a']);
    expect(planPlacements([job('gang', { gpus: 8 }, 1), job('g2', { gpus: 4 }, 2)], nodes, { index, gangs }).placements.map((p) => p.nodeIds.sort())).toEqual([
      ['a'],
      ['b', 'c'],
    ]);
  });

  it('subtracts earlier placements before later jobs', () => {
    const plan = planPlacements([job('j1', { gpus: 8 }), job('j2', { gpus: 1 })], [node('a')]);
    expect(plan.placements).toEqual([{ jobId: 'j1', nodeIds: ['a'], gpuIndices: [[0, 1, 2, 3, 4, 5, 6, 7]] }]);
    expect(plan.pending).toEqual([{ jobId: 'j2', reason: 'INSUFFICIENT_CAPACITY:gpus' }]);
  });

  it.each<[string, PlacementNode[], PendingJob[], Record<string, number[][]>]>([
    [
      'two 4-GPU jobs on one 8-GPU node: disjoint devices',
      [node('a')],
      [job('j1', { gpus: 4 }), job('j2', { gpus: 4 })],
      { j1: [[0, 1, 2, 3]], j2: [[4, 5, 6, 7]] },
    ],
    [
      'devices held by live attempts are skipped',
      [node('a', { gpusAllocated: 2, gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7], gpusHeld: [1, 2] })],
      [job('j', { gpus: 3 })],
      { j: [[0, 3, 4]] },
    ],
    [
      'an unhealthy device is never assigned',
      [node('a', { gpusTotal: 7, gpuIndices: [0, 1, 3, 4, 5, 6, 7] })],
      [job('j', { gpus: 7 })],
      { j: [[0, 1, 3, 4, 5, 6, 7]] },
    ],
    ['a job without GPUs holds none', [node('a')], [job('j', { gpus: 0 })], { j: [[]] }],
    [
      'each gang rank holds devices on its own node',
      [node('a', { gpusAllocated: 1, gpusHeld: [0] }), node('b', { gpusAllocated: 1, gpusHeld: [5] })],
      [job('j', { gpus: 2 }, 2)],
      {
        j: [
          [1, 2],
          [0, 1],
        ],
      },
    ],
    // A snapshot whose counts say a GPU is free but whose devices are all held: the job waits.
    ['counts and devices disagree: no device is shared', [node('a', { gpusTotal: 2, gpuIndices: [0, 1], gpusHeld: [0, 1] })], [job('j', { gpus: 1 })], {}],
  ])('devices: %s', (_name, nodes, jobs, expected) => {
    const plan = planPlacements(jobs, nodes);
    expect(Object.fromEntries(plan.placements.map((p) => [p.jobId, p.gpuIndices]))).toEqual(expected);
  });

  it.each<[string, PlacementNode[], PendingJob[], Record<string, string[]>, Record<string, string>]>([
    [
      'jobs of one shape behind one that cannot go wait for the same reason',
      [node('a', { gpusAllocated: 8 }), node('b', { gpuModel: 'A100', gpusAllocated: 8 })],
      [job('j1', { gpus: 2 }), job('j2', { gpus: 2 }), job('j3', { gpus: 2, gpuModel: 'L4' })],
      {},
      { j1: 'INSUFFICIENT_CAPACITY:gpus', j2: 'INSUFFICIENT_CAPACITY:gpus', j3: 'NO_MATCHING_NODES' },
    ],
    [
      'a same-shape job in a higher band is judged on its own',
      [node('a', { gpusAllocated: 6 }), node('b', { gpusAllocated: 7 })],
      [job('low', { gpus: 2 }, 1, 0), job('high', { gpus: 2 }, 1, 5), job('low2', { gpus: 2 }, 1, 0)],
      { low: ['a'] },
      { high: 'INSUFFICIENT_CAPACITY:gpus', low2: 'INSUFFICIENT_CAPACITY:gpus' },
    ],
  ])('%s', (_name, nodes, jobs, placed, pending) => {
    const plan = planPlacements(jobs, nodes, { reserve: false });
    expect(Object.fromEntries(plan.placements.map((p) => [p.jobId, p.nodeIds]))).toEqual(placed);
    expect(Object.fromEntries(plan.pending.map((p) => [p.jobId, p.reason]))).toEqual(pending);
  });

  // Anti-starvation and PRIORITY: the first job that waits for capacity holds the nodes it is
  // nearest to fitting; later jobs may not backfill them, and lower bands kept out say PRIORITY.
  it.each<
    [string, PlacementNode[], PendingJob[], PlanOptions, { placed: Record<string, string[]>; pending: Record<string, string>; reserved: string[] | null }]
  >([
    [
      'a small job cannot backfill the node a blocked big one waits for',
      [node('a', { gpusAllocated: 4 })],
      [job('big', { gpus: 8 }, 1, 10), job('small', { gpus: 1 }, 1, 10)],
      {},
      { placed: {}, pending: { big: 'INSUFFICIENT_CAPACITY:gpus', small: 'INSUFFICIENT_CAPACITY:gpus' }, reserved: ['a'] },
    ],
    [
      'a lower band kept off the reserved node waits with PRIORITY',
      [node('a', { gpusAllocated: 4 })],
      [job('big', { gpus: 8 }, 1, 50), job('small', { gpus: 1 }, 1, 10)],
      {},
      { placed: {}, pending: { big: 'INSUFFICIENT_CAPACITY:gpus', small: 'PRIORITY' }, reserved: ['a'] },
    ],
    [
      'other nodes stay open to backfill',
      [node('a', { gpusAllocated: 4 }), node('b', { gpusAllocated: 6 })],
      [job('big', { gpus: 8 }, 1, 50), job('small', { gpus: 1 }, 1, 10)],
      {},
      { placed: { small: ['b'] }, pending: { big: 'INSUFFICIENT_CAPACITY:gpus' }, reserved: ['a'] },
    ],
    [
      'without reservations the small job backfills',
      [node('a', { gpusAllocated: 4 })],
      [job('big', { gpus: 8 }, 1, 50), job('small', { gpus: 1 }, 1, 10)],
      { reserve: false },
      { placed: { small: ['a'] }, pending: { big: 'INSUFFICIENT_CAPACITY:gpus' }, reserved: null },
    ],
    [
      'a lower band that lost the free capacity to a higher band placed this cycle: PRIORITY',
      [node('a')],
      [job('high', { gpus: 8 }, 1, 50), job('low', { gpus: 8 }, 1, 10)],
      { reserve: false },
      { placed: { high: ['a'] }, pending: { low: 'PRIORITY' }, reserved: null },
    ],
    [
      'the same band losing it is a capacity wait',
      [node('a')],
      [job('first', { gpus: 8 }, 1, 10), job('second', { gpus: 8 }, 1, 10)],
      {},
      { placed: { first: ['a'] }, pending: { second: 'INSUFFICIENT_CAPACITY:gpus' }, reserved: ['a'] },
    ],
    [
      'a job no node could ever fit reserves nothing',
      [node('a', { gpusAllocated: 4 })],
      [job('huge', { gpus: 16 }, 1, 50), job('small', { gpus: 1 }, 1, 10)],
      {},
      { placed: { small: ['a'] }, pending: { huge: 'NO_MATCHING_NODES' }, reserved: null },
    ],
    [
      'only the first blocked job reserves',
      [node('a', { gpusAllocated: 4 }), node('b', { gpusAllocated: 6 })],
      [job('big1', { gpus: 8 }, 1, 10), job('big2', { gpus: 8 }, 1, 10), job('small', { gpus: 1 })],
      {},
      { placed: { small: ['b'] }, pending: { big1: 'INSUFFICIENT_CAPACITY:gpus', big2: 'INSUFFICIENT_CAPACITY:gpus' }, reserved: ['a'] },
    ],
    [
      'a waiting gang reserves one node per rank',
      [node('a', { gpusAllocated: 1 }), node('b'), node('c', { gpusAllocated: 7 })],
      [job('gang', { gpus: 8 }, 2, 10), job('small', { gpus: 1 }, 1, 10)],
      {},
      { placed: { small: ['c'] }, pending: { gang: 'GANG_WAITING' }, reserved: ['b', 'a'] },
    ],
  ])('%s', (_name, nodes, jobs, opts, expected) => {
    const plan = planPlacements(jobs, nodes, opts);
    expect(Object.fromEntries(plan.placements.map((p) => [p.jobId, p.nodeIds]))).toEqual(expected.placed);
    expect(Object.fromEntries(plan.pending.map((p) => [p.jobId, p.reason]))).toEqual(expected.pending);
    expect(plan.reservation?.nodeIds ?? null).toEqual(expected.reserved);
  });

  it('never over-commits, every placement fits, and no device is held twice or unhealthy (property)', () => {
    const arbNode = fc.record({
      gpusTotal: fc.integer({ min: 0, max: 8 }),
      gpusAllocated: fc.integer({ min: 0, max: 8 }),
      cpu: fc.integer({ min: 1, max: 64 }),
      model: fc.constantFrom('H100', 'A100', null),
      rack: fc.constantFrom('r1', 'r2', 'r3'),
      unhealthy: fc.uniqueArray(fc.nat(7), { maxLength: 3 }),
    });
    const arbJob = fc.record({
      gpus: fc.integer({ min: 0, max: 8 }),
      cpu: fc.integer({ min: 1, max: 32 }),
      model: fc.constantFrom('H100', 'A100', null),
      nodes: fc.integer({ min: 1, max: 3 }),
    });
    fc.assert(
      fc.property(fc.array(arbNode, { maxLength: 12 }), fc.array(arbJob, { maxLength: 20 }), (ns, js) => {
        // Devices as a node reports them: a few unhealthy (not usable, not in gpusTotal) and the
        // allocated ones held by live attempts.
        const nodes = ns.map((n, i) => {
          const usable = Array.from({ length: 8 }, (_, d) => d)
            .filter((d) => !n.unhealthy.includes(d))
            .slice(0, n.gpusTotal);
          const allocated = Math.min(n.gpusAllocated, usable.length);
          return node(`n${i}`, {
            gpusTotal: usable.length,
            gpusAllocated: allocated,
            gpuIndices: usable,
            gpusHeld: usable.slice(usable.length - allocated),
            cpuCores: n.cpu,
            gpuModel: n.model,
            rack: n.rack,
          });
        });
        const jobs = js.map((j, i) => job(`j${i}`, { gpus: j.gpus, cpuCores: j.cpu, gpuModel: j.model }, j.nodes));
        const plan = planPlacements(jobs, nodes);
        const state = new Map(nodes.map((n) => [n.id, n]));
        const held = new Map(nodes.map((n) => [n.id, new Set(n.gpusHeld)]));
        for (const p of plan.placements) {
          const j = jobs.find((x) => x.id === p.jobId)!;
          expect(new Set(p.nodeIds).size).toBe(j.nodes);
          expect(p.gpuIndices).toHaveLength(j.nodes);
          p.nodeIds.forEach((id, rank) => {
            const n = state.get(id)!;
            expect(fitsNow(n, j.resources)).toBe(true);
            state.set(id, allocate(n, j.resources));
            // Exactly the rank's count, each usable (healthy), none held by anyone else.
            const devices = p.gpuIndices[rank];
            expect(devices).toHaveLength(j.resources.gpus);
            for (const d of devices) {
              expect(n.gpuIndices).toContain(d);
              expect(held.get(id)!.has(d)).toBe(false);
              held.get(id)!.add(d);
            }
          });
        }
        for (const n of state.values()) expect(isOverCommitted(n)).toBe(false);
        expect(plan.placements.length + plan.pending.length).toBe(jobs.length);
      }),
    );
  });

  it("plans the same on a caller's index and gang candidates, and gives both back as they were (property)", () => {
    const arbNode = fc.record({
      gpusAllocated: fc.integer({ min: 0, max: 8 }),
      cpu: fc.integer({ min: 1, max: 64 }),
      model: fc.constantFrom('H100', 'A100', null),
      rack: fc.constantFrom('r1', 'r2'),
      degraded: fc.boolean(),
    });
    const arbJob = fc.record({
      gpus: fc.integer({ min: 0, max: 8 }),
      cpu: fc.integer({ min: 1, max: 32 }),
      model: fc.constantFrom('H100', 'A100', null),
      nodes: fc.integer({ min: 1, max: 2 }),
    });
    fc.assert(
      fc.property(
        fc.array(arbNode, { minLength: 1, maxLength: 12 }),
        fc.array(arbJob, { maxLength: 20 }),
        fc.array(arbJob, { maxLength: 5 }),
        (ns, js, probes) => {
          const nodes = ns.map((n, i) =>
            node(`n${i}`, {
              gpusTotal: 8,
              gpusAllocated: n.gpusAllocated,
              cpuCores: n.cpu,
              gpuModel: n.model,
              rack: n.rack,
              health: n.degraded ? 'DEGRADED' : 'HEALTHY',
            }),
          );
          const jobs = js.map((j, i) => job(`j${i}`, { gpus: j.gpus, cpuCores: j.cpu, gpuModel: j.model }, j.nodes));
          const index = new FitIndex(nodes);
          const gangs = new GangCandidates(index);
          const shapes = [...jobs.map((j) => j.resources), ...probes.map((p) => ({ gpus: p.gpus, gpuModel: p.model, cpuCores: p.cpu, memoryMiB: 1 }))];
          for (const r of shapes) gangs.racks(r, new Set()); // built before the plan, as a caller's would be
          expect(planPlacements(jobs, nodes, { index, gangs })).toEqual(planPlacements(jobs, nodes));
          // Given back as they were: they answer every request as fresh ones of the same nodes do.
          const fresh = new FitIndex(nodes);
          const freshGangs = new GangCandidates(fresh);
          const racks = (g: GangCandidates, r: (typeof shapes)[number]) =>
            [...g.racks(r, new Set())]
              .map(
                ([rack, ns]) =>
                  `${rack}:${ns
                    .map((n) => n.id)
                    .sort()
                    .join(',')}`,
              )
              .sort();
          for (const r of shapes) {
            expect(index.best(r, new Set())?.id ?? null).toBe(fresh.best(r, new Set())?.id ?? null);
            expect(
              index
                .fitting(r, new Set())
                .map((n) => n.id)
                .sort(),
            ).toEqual(
              fresh
                .fitting(r, new Set())
                .map((n) => n.id)
                .sort(),
            );
            expect(racks(gangs, r)).toEqual(racks(freshGangs, r));
          }
        },
      ),
    );
  });

  it('places a gang on the rack with the fewest fitting nodes that holds it, on its best-fitting nodes, as a scan of every node would (property)', () => {
    // The rule stated on its own: free GPUs, then cores, then memory, then id, fewest first.
    const fit = (a: PlacementNode, b: PlacementNode) =>
      a.gpusTotal - a.gpusAllocated - (b.gpusTotal - b.gpusAllocated) ||
      a.cpuCores - a.cpuAllocated - (b.cpuCores - b.cpuAllocated) ||
      a.memoryMiB - a.memoryAllocated - (b.memoryMiB - b.memoryAllocated) ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const arbNode = fc.record({
      gpusAllocated: fc.integer({ min: 0, max: 8 }),
      cpu: fc.integer({ min: 1, max: 64 }),
      rack: fc.constantFrom('r1', 'r2', 'r3', 'r4'),
    });
    fc.assert(
      fc.property(
        fc.array(arbNode, { minLength: 1, maxLength: 16 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 2, max: 4 }),
        fc.array(fc.nat(15), { maxLength: 4 }),
        (ns, gpus, size, busy) => {
          const initial = ns.map((n, i) => node(`n${String(i).padStart(2, '0')}`, { gpusAllocated: n.gpusAllocated, cpuCores: n.cpu, rack: n.rack }));
          // A caller's index and candidates, kept current through node changes (as the scheduler's are).
          const index = new FitIndex(initial);
          const gangs = new GangCandidates(index);
          const req = { gpus, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1024 };
          gangs.racks(req, new Set());
          const nodes = [...initial];
          for (const i of busy) {
            if (i >= nodes.length) continue;
            const after = { ...nodes[i], gpusAllocated: Math.min(8, nodes[i].gpusAllocated + 1) };
            index.replace(nodes[i], after);
            gangs.changed(after, new Set());
            nodes[i] = after;
          }
          const candidates = nodes.filter((n) => fitsNow(n, req));
          const byRack = new Map<string, PlacementNode[]>();
          for (const n of candidates) byRack.set(n.rack, [...(byRack.get(n.rack) ?? []), n].sort(fit));
          const holding = [...byRack.values()].filter((r) => r.length >= size).sort((a, b) => a.length - b.length || fit(a[0], b[0]));
          const expected = holding.length > 0 ? holding[0].slice(0, size) : candidates.length >= size ? [...candidates].sort(fit).slice(0, size) : null;
          const plan = planPlacements([job('g', req, size)], nodes, { index, gangs });
          expect(plan.placements[0]?.nodeIds ?? null).toEqual(expected ? expected.map((n) => n.id) : null);
          for (const [rack, inRack] of gangs.racks(req, new Set())) expect(inRack.map((n) => n.id)).toEqual(byRack.get(rack)!.map((n) => n.id));
        },
      ),
      { numRuns: 300 },
    );
  });
});
