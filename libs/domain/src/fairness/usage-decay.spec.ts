import fc from 'fast-check';
import { decayUsage, decayedGpuSeconds } from './usage-decay';

const HOUR = 3_600_000;

describe('decayUsage', () => {
  it.each([
    [100, 0, 0, 3600, 100],
    [100, 0, HOUR, 3600, 50],
    [100, 0, 2 * HOUR, 3600, 25],
    [100, HOUR, 0, 3600, 100],
  ])('%d from %d to %d, half-life %d s -> %d', (v, from, to, hl, expected) => expect(decayUsage(v, from, to, hl)).toBeCloseTo(expected, 9));
});

describe('decayedGpuSeconds', () => {
  it('approaches the plain GPU-seconds when the half-life is long', () => {
    expect(decayedGpuSeconds(8, 0, HOUR, HOUR, 1e12)).toBeCloseTo(8 * 3600, 3);
  });

  it('counts nothing for an empty or future interval', () => {
    expect(decayedGpuSeconds(8, HOUR, HOUR, 2 * HOUR, 3600)).toBe(0);
    expect(decayedGpuSeconds(8, 3 * HOUR, 4 * HOUR, 2 * HOUR, 3600)).toBe(0);
    expect(decayedGpuSeconds(0, 0, HOUR, HOUR, 3600)).toBe(0);
  });

  it('adds up over any split of an interval, and decays like a value (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 0, max: 10 * HOUR }),
        fc.integer({ min: 0, max: 10 * HOUR }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 10 * HOUR }),
        fc.integer({ min: 60, max: 1e6 }),
        (gpus, a, b, cut, later, hl) => {
          const [start, end] = [Math.min(a, b), Math.max(a, b)];
          const mid = start + (end - start) * cut;
          const now = end;
          const whole = decayedGpuSeconds(gpus, start, end, now, hl);
          const parts = decayedGpuSeconds(gpus, start, mid, now, hl) + decayedGpuSeconds(gpus, mid, end, now, hl);
          expect(parts).toBeCloseTo(whole, 6);
          expect(decayUsage(whole, now, now + later, hl)).toBeCloseTo(decayedGpuSeconds(gpus, start, end, now + later, hl), 6);
        },
      ),
    );
  });
});
