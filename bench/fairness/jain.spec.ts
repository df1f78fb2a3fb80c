import fc from 'fast-check';
import { jainIndex } from './jain';

describe('jainIndex', () => {
  it.each([
    [[1, 1, 1, 1], 1],
    [[1, 0, 0, 0], 0.25],
    [[2, 2], 1],
    [[1, 3], 16 / 20],
    [[0.5, 1, 1.5], 9 / (3 * 3.5)],
  ])('%j -> %d', (xs, expected) => expect(jainIndex(xs)).toBeCloseTo(expected, 12));

  it('is NaN with nothing to judge', () => {
    expect(jainIndex([])).toBeNaN();
    expect(jainIndex([0, 0])).toBeNaN();
  });

  it('lies in [1/n, 1] and ignores scale (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.001, max: 1000, noNaN: true }), { minLength: 1, maxLength: 20 }),
        fc.double({ min: 0.01, max: 100, noNaN: true }),
        (xs, k) => {
          const j = jainIndex(xs);
          expect(j).toBeGreaterThanOrEqual(1 / xs.length - 1e-9);
          expect(j).toBeLessThanOrEqual(1 + 1e-9);
          expect(jainIndex(xs.map((x) => x * k))).toBeCloseTo(j, 9);
        },
      ),
    );
  });
});
