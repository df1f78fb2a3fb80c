import { TEST_SUITES } from './test-resources';

describe('test suite registry', () => {
  const entries = Object.entries(TEST_SUITES);

  it('gives every suite a Redis db of its own, never the integration default (1)', () => {
    const dbs = entries.map(([, s]) => s.redisDb);
    expect(new Set(dbs).size).toBe(dbs.length);
    expect(dbs).not.toContain(1);
    expect(Math.max(...dbs)).toBeLessThan(64);
  });

  it('gives every suite with services a port range of 20 that overlaps no other', () => {
    const ranges = entries
      .filter(([, s]) => s.basePort > 0)
      .map(([, s]) => s.basePort)
      .sort((a, b) => a - b);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i] - ranges[i - 1]).toBeGreaterThanOrEqual(20);
  });
});
