import { EvictionPolicy, RackView, nextHoldStarts, planEvictions } from './eviction-policy';

/** The reconciler's defaults (GANTRY_PARTITION_*, GANTRY_EVICTION*). */
const DEFAULT_EVICTION_POLICY: EvictionPolicy = { minRackSize: 4, partitionShare: 0.5, evictionsPerSecond: 5, burst: 20, holdMs: 300_000 };

const p = { ...DEFAULT_EVICTION_POLICY, evictionsPerSecond: 2, burst: 3 };
const racks = (...rs: RackView[]) => new Map(rs.map((r) => [r.rack, r]));

describe('planEvictions', () => {
  it('evicts an isolated dead node', () => {
    const plan = planEvictions([{ nodeId: 'a', rack: 'r1' }], racks({ rack: 'r1', total: 20, silent: 1 }), { tokens: 3, updatedAt: 0 }, 0, p);
    expect(plan).toMatchObject({ evict: ['a'], heldForPartition: [], deferred: [] });
  });

  it('holds a rack where half or more went silent together', () => {
    const plan = planEvictions(
      [
        { nodeId: 'a', rack: 'r1' },
        { nodeId: 'b', rack: 'r1' },
        { nodeId: 'c', rack: 'r2' },
      ],
      racks({ rack: 'r1', total: 20, silent: 10 }, { rack: 'r2', total: 20, silent: 1 }),
      { tokens: 3, updatedAt: 0 },
      0,
      p,
    );
    expect(plan).toMatchObject({ evict: ['c'], heldForPartition: ['a', 'b'] });
  });

  it('does not call a tiny rack partitioned', () => {
    const plan = planEvictions([{ nodeId: 'a', rack: 'r1' }], racks({ rack: 'r1', total: 2, silent: 2 }), { tokens: 3, updatedAt: 0 }, 0, p);
    expect(plan.evict).toEqual(['a']);
  });

  it('rate-limits with a token bucket and refills over time', () => {
    const many = Array.from({ length: 6 }, (_, i) => ({ nodeId: `n${i}`, rack: `r${i}` }));
    const quiet = racks(...many.map((m) => ({ rack: m.rack, total: 20, silent: 1 })));
    const first = planEvictions(many, quiet, { tokens: 3, updatedAt: 0 }, 0, p);
    expect(first.evict).toEqual(['n0', 'n1', 'n2']);
    expect(first.deferred).toEqual(['n3', 'n4', 'n5']);
    const second = planEvictions(
      first.deferred.map((n, i) => ({ nodeId: n, rack: `r${i + 3}` })),
      quiet,
      first.bucket,
      1000,
      p,
    );
    expect(second.evict).toEqual(['n3', 'n4']);
    expect(second.deferred).toEqual(['n5']);
  });

  describe('hold window', () => {
    const q = { ...p, holdMs: 10_000 };
    const partitioned = racks({ rack: 'r1', total: 20, silent: 20 });
    it.each<[string, number | null | undefined, number, number, string]>([
      ['first held this round', undefined, 0, 10_000, 'held'],
      ['held for less than the window', 1_000, 10_999, 10_000, 'held'],
      ['held for exactly the window', 1_000, 11_000, 10_000, 'evict'],
      ['held past the window', 1_000, 60_000, 10_000, 'evict'],
      ['window 0: held until the rack returns', 1_000, 1e9, 0, 'held'],
    ])('%s -> %s', (_name, heldSinceMs, now, holdMs, expected) => {
      const plan = planEvictions([{ nodeId: 'a', rack: 'r1', heldSinceMs }], partitioned, { tokens: 3, updatedAt: now }, now, { ...q, holdMs });
      expect(plan.evict.length ? 'evict' : plan.heldForPartition.length ? 'held' : 'deferred').toBe(expected);
      expect(plan.holdExpired).toEqual(expected === 'evict' ? ['a'] : []);
    });

    it('a rack whose hold ran out drains through the token bucket, not all at once', () => {
      const many = Array.from({ length: 10 }, (_, i) => ({ nodeId: `n${i}`, rack: 'r1', heldSinceMs: 0 }));
      const first = planEvictions(many, partitioned, { tokens: 3, updatedAt: 10_000 }, 10_000, q);
      expect(first.evict).toEqual(['n0', 'n1', 'n2']);
      expect(first.deferred).toHaveLength(7);
      expect(first.holdExpired).toHaveLength(10);
      const second = planEvictions(many.slice(3), partitioned, first.bucket, 11_000, q);
      expect(second.evict).toEqual(['n3', 'n4']); // 2 per second
    });

    it('a held node stays held after most of its rack came back (until its window runs out)', () => {
      const healing = racks({ rack: 'r1', total: 20, silent: 3 });
      expect(planEvictions([{ nodeId: 'a', rack: 'r1', heldSinceMs: 1_000 }], healing, { tokens: 3, updatedAt: 5_000 }, 5_000, q).heldForPartition).toEqual([
        'a',
      ]);
      expect(planEvictions([{ nodeId: 'a', rack: 'r1', heldSinceMs: 1_000 }], healing, { tokens: 3, updatedAt: 11_000 }, 11_000, q).evict).toEqual(['a']);
      expect(planEvictions([{ nodeId: 'b', rack: 'r1' }], healing, { tokens: 3, updatedAt: 5_000 }, 5_000, q).evict).toEqual(['b']); // never held: judged alone
    });
  });

  describe('nextHoldStarts', () => {
    it.each<[string, Array<[string, number]>, string[], string[], Array<[string, number]>]>([
      ['a newly held node starts now', [], ['a'], ['a'], [['a', 100]]],
      ['a held node keeps its start', [['a', 5]], ['a'], ['a'], [['a', 5]]],
      ['a held node still dead stays held when its rack no longer looks partitioned', [['a', 5]], [], ['a'], [['a', 5]]],
      [
        'a node heard again drops out',
        [
          ['a', 5],
          ['b', 7],
        ],
        ['b'],
        ['b'],
        [['b', 7]],
      ],
      ['a later partition gets a new window', [], ['a'], ['a'], [['a', 100]]],
    ])('%s', (_name, prev, deadInPartitioned, dead, expected) => {
      expect([...nextHoldStarts(new Map(prev), deadInPartitioned, (id) => dead.includes(id), 100)]).toEqual(expected);
    });
  });

  it('never holds more than the burst', () => {
    const plan = planEvictions([], racks(), { tokens: 0, updatedAt: 0 }, 3_600_000, p);
    expect(plan.bucket.tokens).toBe(3);
  });
});
