import fc from 'fast-check';
import { healthBands } from './health-bands';
import { nodeHealth } from './node-health';

const t = { suspectMs: 15_000, deadMs: 40_000 };
const inBand = (v: number, b: { above: number; atMost: number | null }) => v > b.above && (b.atMost === null || v <= b.atMost);

describe('healthBands', () => {
  it.each([
    ['just heard', 0, 'HEALTHY'],
    ['one ms before suspect', 14_999, 'HEALTHY'],
    ['exactly suspect', 15_000, 'DEGRADED'],
    ['one ms before dead', 39_999, 'DEGRADED'],
    ['exactly dead', 40_000, 'UNHEALTHY'],
    ['long gone', 1e9, 'UNHEALTHY'],
  ])('%s: silence %d ms is %s', (_n, silence, expected) => {
    const now = 2e12;
    const b = healthBands(now, t);
    const got = inBand(now - silence, b.healthy) ? 'HEALTHY' : inBand(now - silence, b.degraded) ? 'DEGRADED' : 'UNHEALTHY';
    expect(got).toBe(expected);
    expect(nodeHealth(now - silence, now, t)).toBe(expected);
  });

  it('agrees with nodeHealth for any silence and thresholds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 1, max: 1e5 }), fc.integer({ min: 0, max: 1e5 }), (silence, suspect, extra) => {
        const th = { suspectMs: suspect, deadMs: suspect + extra };
        const now = 1e12;
        const b = healthBands(now, th);
        const h = nodeHealth(now - silence, now, th);
        expect(inBand(now - silence, b.healthy)).toBe(h === 'HEALTHY');
        expect(inBand(now - silence, b.degraded)).toBe(h === 'DEGRADED');
      }),
    );
  });
});
