import { DEFAULT_EVICTION_POLICY, RackView, planEvictions } from './eviction-policy';

const p = { ...DEFAULT_EVICTION_POLICY, evictionsPerSecond: 2, burst: 3 };
const racks = (...rs: RackView[]) => new Map(rs.map((r) => [r.rack, r]));

describe('planEvictions', () => {
  it('evicts an isolated dead node', () => {
    const plan = planEvictions([{ nodeId: 'a', rack: 'r1' }], racks({ rack: 'r1', total: 20, silent: 1 }), { tokens: 3, updatedAt: 0 }, 0, p);
    expect(plan).toMatchObject({ evict: ['a'], heldForPartition: [], deferred: [] });
  });

  it('holds a rack where half or more went silent together', () => {
    const plan = planEvictions(
      [{ nodeId: 'a', rack: 'r1' }, { nodeId: 'b', rack: 'r1' }, { nodeId: 'c', rack: 'r2' }],
      racks({ rack: 'r1', total: 20, silent: 10 }, { rack: 'r2', total: 20, silent: 1 }),
      { tokens: 3, updatedAt: 0 }, 0, p,
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
    const second = planEvictions(first.deferred.map((n, i) => ({ nodeId: n, rack: `r${i + 3}` })), quiet, first.bucket, 1000, p);
    expect(second.evict).toEqual(['n3', 'n4']);
    expect(second.deferred).toEqual(['n5']);
  });

  it('never holds more than the burst', () => {
    const plan = planEvictions([], racks(), { tokens: 0, updatedAt: 0 }, 3_600_000, p);
    expect(plan.bucket.tokens).toBe(3);
  });
});
