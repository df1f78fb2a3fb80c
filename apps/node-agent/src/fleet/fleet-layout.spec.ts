import { NODES_PER_RACK, simulatedNode } from './fleet-layout';

describe('simulatedNode', () => {
  it('is deterministic and names nodes by index', () => {
    expect(simulatedNode('sim', 42)).toEqual(simulatedNode('sim', 42));
    expect(simulatedNode('sim', 42).nodeId).toBe('sim-00042');
  });

  it('puts 20 nodes in a rack and spreads racks over zones', () => {
    expect(simulatedNode('s', 0).rack).toBe(simulatedNode('s', NODES_PER_RACK - 1).rack);
    expect(simulatedNode('s', 0).rack).not.toBe(simulatedNode('s', NODES_PER_RACK).rack);
    expect(new Set(Array.from({ length: 60 }, (_, i) => simulatedNode('s', i * NODES_PER_RACK).zone)).size).toBe(3);
  });

  it('mixes models roughly 50/30/15/5 over a large fleet', () => {
    const counts = new Map<string | null, number>();
    for (let i = 0; i < 10_000; i++) {
      const m = simulatedNode('s', i).gpuModel;
      counts.set(m, (counts.get(m) ?? 0) + 1);
    }
    expect(counts.get('H100')! / 10_000).toBeCloseTo(0.5, 1);
    expect(counts.get('A100')! / 10_000).toBeCloseTo(0.3, 1);
    expect(counts.get('L4')! / 10_000).toBeCloseTo(0.15, 1);
    expect(counts.get(null)! / 10_000).toBeCloseTo(0.05, 1);
  });
});
