import { nodeHealth } from './node-health';

const t = { suspectMs: 15_000, deadMs: 40_000 };

describe('nodeHealth', () => {
  it.each([
    [null, 'UNHEALTHY'],
    [100_000, 'HEALTHY'],
    [100_000 - 14_999, 'HEALTHY'],
    [100_000 - 15_000, 'DEGRADED'],
    [100_000 - 39_999, 'DEGRADED'],
    [100_000 - 40_000, 'UNHEALTHY'],
    [100_000 + 500, 'HEALTHY'], // a beat stamped slightly in the future is not silence
  ])('last seen %p at now=100000 -> %s', (lastSeen, expected) => {
    expect(nodeHealth(lastSeen, 100_000, t)).toBe(expected);
  });
});
