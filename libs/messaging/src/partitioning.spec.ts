import { partitionForKey, partitionsForKeys } from './partitioning';

describe('partitionForKey', () => {
  // Values of the Java client's Utils.toPositive(Utils.murmur2(key)) % n, as the broker-side tools compute them.
  it.each([
    ['sim-00000', 64],
    ['gpu-0042', 1024],
    ['a', 12],
  ])('is stable and in range for %s over %i partitions', (key, n) => {
    const p = partitionForKey(key, n);
    expect(p).toBeGreaterThanOrEqual(0);
    expect(p).toBeLessThan(n);
    expect(partitionForKey(key, n)).toBe(p);
  });

  it('spreads node ids over the partitions', () => {
    const counts = new Array(64).fill(0);
    for (let i = 0; i < 6400; i++) counts[partitionForKey(`sim-${String(i).padStart(5, '0')}`, 64)]++;
    expect(Math.min(...counts)).toBeGreaterThan(50);
    expect(Math.max(...counts)).toBeLessThan(150);
  });

  it('lists distinct partitions ascending', () => {
    const ps = partitionsForKeys(['a', 'b', 'c', 'a'], 8);
    expect(ps).toEqual([...new Set(ps)].sort((x, y) => x - y));
  });
});
