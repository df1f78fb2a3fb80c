import fc from 'fast-check';
import { USAGE_GRANULARITIES, bucketCount, bucketStart, clipIntoBuckets, nextBucketStart } from './usage-buckets';

const H = 3_600_000;
const T = Date.UTC(2026, 0, 31, 22, 30); // half past ten on the last day of January

describe('bucketStart / nextBucketStart', () => {
  it.each([
    ['hour', T, Date.UTC(2026, 0, 31, 22), Date.UTC(2026, 0, 31, 23)],
    ['day', T, Date.UTC(2026, 0, 31), Date.UTC(2026, 1, 1)],
    ['month', T, Date.UTC(2026, 0, 1), Date.UTC(2026, 1, 1)],
    ['month', Date.UTC(2026, 11, 15), Date.UTC(2026, 11, 1), Date.UTC(2027, 0, 1)],
    ['day', Date.UTC(2028, 1, 29, 5), Date.UTC(2028, 1, 29), Date.UTC(2028, 2, 1)],
  ] as const)('%s of %d starts at %d, next at %d', (g, ms, start, next) => {
    expect(bucketStart(ms, g)).toBe(start);
    expect(nextBucketStart(ms, g)).toBe(next);
  });
});

describe('bucketCount', () => {
  it.each([
    ['hour', Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1), 8760],
    ['day', Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1), 365],
    ['month', Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1), 12],
    ['month', Date.UTC(2026, 0, 15), Date.UTC(2026, 1, 2), 2],
    ['hour', Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 1, 1), 1],
  ] as const)('%s from %d to %d: %d', (g, from, to, n) => expect(bucketCount(from, to, g)).toBe(n));
});

describe('clipIntoBuckets', () => {
  it.each([
    ['inside one hour', T, T + 60_000, 0, 10 * T, 'hour', [{ start: Date.UTC(2026, 0, 31, 22), ms: 60_000 }]],
    [
      'across midnight by day',
      T,
      T + 3 * H,
      0,
      10 * T,
      'day',
      [
        { start: Date.UTC(2026, 0, 31), ms: 1.5 * H },
        { start: Date.UTC(2026, 1, 1), ms: 1.5 * H },
      ],
    ],
    [
      'clipped to the range',
      T,
      T + 3 * H,
      T + H,
      T + 2 * H,
      'hour',
      [
        { start: Date.UTC(2026, 0, 31, 23), ms: 0.5 * H },
        { start: Date.UTC(2026, 1, 1), ms: 0.5 * H },
      ],
    ],
    ['outside the range', T, T + H, T + 2 * H, T + 3 * H, 'hour', []],
    ['empty', T, T, 0, 10 * T, 'month', []],
  ] as const)('%s', (_, start, end, from, to, g, shares) => expect(clipIntoBuckets(start, end, from, to, g)).toEqual(shares));

  it('shares add up to the clipped length, and any split of the range adds up to the whole (property)', () => {
    const year = 366 * 24 * H;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: year }),
        fc.integer({ min: 0, max: year }),
        fc.integer({ min: 0, max: year }),
        fc.integer({ min: 0, max: year }),
        fc.integer({ min: 0, max: year }),
        fc.constantFrom(...USAGE_GRANULARITIES),
        (a, b, c, d, cut, g) => {
          const base = Date.UTC(2026, 0, 1);
          const [start, end] = [base + Math.min(a, b), base + Math.max(a, b)];
          const [from, to] = [base + Math.min(c, d), base + Math.max(c, d)];
          const mid = Math.min(Math.max(base + cut, from), to);
          const sum = (xs: Array<{ ms: number }>) => xs.reduce((s, x) => s + x.ms, 0);
          const whole = clipIntoBuckets(start, end, from, to, g);
          expect(sum(whole)).toBe(Math.max(0, Math.min(end, to) - Math.max(start, from)));
          expect(whole.every((s) => s.ms > 0 && s.start === bucketStart(s.start, g))).toBe(true);
          expect(sum(clipIntoBuckets(start, end, from, mid, g)) + sum(clipIntoBuckets(start, end, mid, to, g))).toBe(sum(whole));
        },
      ),
    );
  });
});
