import fc from 'fast-check';
import { EvictionPolicy, refill } from './eviction-policy';
import { FleetObservation, holdNote, judgeFleet } from './fleet-judgement';
import { HealthTransition, RecordedHealth, UNRECORDED } from './health-transitions';

const T = { suspectMs: 15_000, deadMs: 40_000 };
const POLICY: EvictionPolicy = { minRackSize: 4, partitionShare: 0.5, evictionsPerSecond: 5, burst: 20, holdMs: 300_000 };
const NOW = 1_000_000;

/** A fleet from `rack:silence` entries, node ids n0, n1, ...; every node holds work unless `idle` lists it. */
function fleet(nodes: Array<[string, number]>, idle: string[] = []): FleetObservation {
  const silence = new Map(nodes.map(([, s], i) => [`n${i}`, s]));
  return {
    nodes: nodes.map(([rack], i) => ({ nodeId: `n${i}`, rack })),
    withWork: new Set([...silence.keys()].filter((id) => !idle.includes(id))),
    silenceMs: (id) => silence.get(id)!,
    heardSinceInfoBegan: () => true,
  };
}
const fresh = { recorded: new Map<string, RecordedHealth>(), holdStarts: new Map<string, number>(), bucket: { tokens: POLICY.burst, updatedAt: NOW } };

describe('judgeFleet', () => {
  it.each<[string, Array<[string, number]>, string[], { evict: string[]; held: string[]; transitions: string[] }]>([
    [
      'a quiet fleet: nothing to do, nothing to record',
      [
        ['r1', 0],
        ['r1', 1_000],
      ],
      [],
      { evict: [], held: [], transitions: [] },
    ],
    [
      'one dead node with work is evicted',
      [
        ['r1', 50_000],
        ['r1', 0],
        ['r1', 0],
        ['r1', 0],
      ],
      [],
      { evict: ['n0'], held: [], transitions: ['n0:UNHEALTHY:SILENT_PAST_DEAD'] },
    ],
    [
      'a dead node without work is recorded, not evicted',
      [
        ['r1', 50_000],
        ['r2', 0],
      ],
      ['n0'],
      { evict: [], held: [], transitions: ['n0:UNHEALTHY:SILENT_PAST_DEAD'] },
    ],
    [
      'a suspect node is DEGRADED',
      [
        ['r1', 20_000],
        ['r2', 0],
      ],
      [],
      { evict: [], held: [], transitions: ['n0:DEGRADED:SILENT_PAST_SUSPECT'] },
    ],
    [
      'a rack half silent is held, its suspects counted',
      [
        ['r1', 50_000],
        ['r1', 20_000],
        ['r1', 0],
        ['r1', 0],
      ],
      [],
      {
        evict: [],
        held: ['n0'],
        transitions: ['n0:UNHEALTHY:PARTITION_HELD', 'n1:DEGRADED:SILENT_PAST_SUSPECT'],
      },
    ],
    [
      'a small rack is never a partition',
      [
        ['r1', 50_000],
        ['r1', 50_000],
      ],
      [],
      { evict: ['n0', 'n1'], held: [], transitions: ['n0:UNHEALTHY:SILENT_PAST_DEAD', 'n1:UNHEALTHY:SILENT_PAST_DEAD'] },
    ],
    [
      'the longest silence goes first',
      [
        ['r1', 41_000],
        ['r2', 90_000],
      ],
      [],
      { evict: ['n1', 'n0'], held: [], transitions: ['n0:UNHEALTHY:SILENT_PAST_DEAD', 'n1:UNHEALTHY:SILENT_PAST_DEAD'] },
    ],
  ])('%s', (_n, nodes, idle, expected) => {
    const v = judgeFleet(fleet(nodes, idle), fresh, NOW, POLICY, T);
    expect(v.plan.evict).toEqual(expected.evict);
    expect(v.plan.heldForPartition).toEqual(expected.held);
    expect(v.transitions.map((c) => `${c.nodeId}:${c.to.health}:${c.reason}`)).toEqual(expected.transitions);
  });

  it('a held node keeps its hold start, and is evicted (through the bucket) once the window has run out', () => {
    const nodes: Array<[string, number]> = [
      ['r1', 50_000],
      ['r1', 50_000],
      ['r1', 0],
      ['r1', 0],
    ];
    const first = judgeFleet(fleet(nodes), fresh, NOW, POLICY, T);
    expect(first.plan.heldForPartition).toEqual(['n0', 'n1']);
    const recorded = new Map(first.transitions.map((c) => [c.nodeId, c.to]));
    const later = judgeFleet(fleet(nodes), { recorded, holdStarts: first.holdStarts, bucket: first.plan.bucket }, NOW + POLICY.holdMs, POLICY, T);
    expect(later.holdStarts.get('n0')).toBe(NOW);
    expect(later.plan.evict).toEqual(['n0', 'n1']);
    expect(later.plan.holdExpired).toEqual(['n0', 'n1']);
    expect(later.transitions.map((c) => c.reason)).toEqual(['PARTITION_HOLD_EXPIRED', 'PARTITION_HOLD_EXPIRED']);
  });

  it('over random fleets: every dead node with work is evicted, held or deferred, once; no more evictions than tokens; only changes recorded', () => {
    const arbNode = fc.record({ rack: fc.constantFrom('r1', 'r2', 'r3'), silence: fc.integer({ min: 0, max: 400_000 }), work: fc.boolean() });
    const arbRecorded = fc.constantFrom<RecordedHealth>(
      UNRECORDED,
      { health: 'DEGRADED', held: false, heldSinceMs: null },
      { health: 'UNHEALTHY', held: false, heldSinceMs: null },
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(arbNode, arbRecorded), { maxLength: 40 }), fc.integer({ min: 0, max: 20 }), (ns, tokens) => {
        const seen = fleet(
          ns.map(([n]) => [n.rack, n.silence]),
          ns.flatMap(([n], i) => (n.work ? [] : [`n${i}`])),
        );
        const recorded = new Map(ns.map(([, r], i) => [`n${i}`, r]));
        const bucket = { tokens, updatedAt: NOW };
        const v = judgeFleet(seen, { recorded, holdStarts: new Map(), bucket }, NOW, POLICY, T);
        const deadWithWork = seen.nodes.filter((n) => seen.withWork.has(n.nodeId) && seen.silenceMs(n.nodeId) >= T.deadMs).map((n) => n.nodeId);
        const decided = [...v.plan.evict, ...v.plan.heldForPartition, ...v.plan.deferred];
        expect(decided.sort()).toEqual([...deadWithWork].sort());
        expect(v.plan.evict.length).toBeLessThanOrEqual(Math.floor(refill(bucket, NOW, POLICY).tokens));
        for (const c of v.transitions) expect([c.to.health, c.to.held]).not.toEqual([c.from.health, c.from.held]);
        for (const id of v.plan.heldForPartition) expect(v.holdStarts.has(id)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('holdNote', () => {
  const h = (health: RecordedHealth['health'], held = false): RecordedHealth => ({ health, held, heldSinceMs: held ? 1 : null });
  it.each<[string, HealthTransition, ReturnType<typeof holdNote>]>([
    ['newly held', { nodeId: 'n', from: h('DEGRADED'), to: h('UNHEALTHY', true), reason: 'PARTITION_HELD' }, 'NODE_PARTITION_HELD'],
    ['back from a hold', { nodeId: 'n', from: h('UNHEALTHY', true), to: h('HEALTHY'), reason: 'HEARD' }, 'NODE_RETURNED'],
    ['hold expired: the eviction says it', { nodeId: 'n', from: h('UNHEALTHY', true), to: h('UNHEALTHY'), reason: 'PARTITION_HOLD_EXPIRED' }, null],
    ['plain death', { nodeId: 'n', from: h('DEGRADED'), to: h('UNHEALTHY'), reason: 'SILENT_PAST_DEAD' }, null],
    ['back from plain death', { nodeId: 'n', from: h('UNHEALTHY'), to: h('HEALTHY'), reason: 'HEARD' }, null],
  ])('%s', (_n, change, expected) => expect(holdNote(change)).toBe(expected));
});
