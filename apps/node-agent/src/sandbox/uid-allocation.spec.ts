import fc from 'fast-check';
import { parseUidRange, uidForOwner } from './uid-allocation';

describe('parseUidRange', () => {
  it.each<[string, ReturnType<typeof parseUidRange>]>([
    ['200000-299999', { min: 200000, max: 299999 }],
    [' 1-1 ', { min: 1, max: 1 }],
    ['0-10', 'must not include uid 0'],
    ['10-9', 'must not end below its start'],
    ['1-4294967295', 'must end at or below 2147483646'],
    ['200000', 'must be two uids joined by "-", e.g. 200000-299999'],
    ['-5-10', 'must be two uids joined by "-", e.g. 200000-299999'],
    ['a-b', 'must be two uids joined by "-", e.g. 200000-299999'],
  ])('%s -> %p', (text, expected) => {
    expect(parseUidRange(text)).toEqual(expected);
  });
});

describe('uidForOwner', () => {
  const range = { min: 100, max: 103 };
  it.each<[string, Record<string, number>, string, number[], number | null]>([
    ['a new owner gets the lowest free uid', {}, 'alice', [], 100],
    ['an owner keeps its uid', { alice: 102 }, 'alice', [], 102],
    ['the next owner skips uids held', { alice: 100, bob: 101 }, 'carol', [], 102],
    ["the agent's own uid is never given", {}, 'alice', [100], 101],
    ['a full range gives none', { a: 100, b: 101, c: 102, d: 103 }, 'e', [], null],
  ])('%s', (_n, held, owner, exclude, uid) => {
    expect(uidForOwner(new Map(Object.entries(held)), owner, range, new Set(exclude))).toBe(uid);
  });

  it('never gives two owners one uid, never 0 or an excluded uid, always one within the range', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { maxLength: 40 }), fc.integer({ min: 1, max: 8 }), (owners, width) => {
        const r = { min: 1, max: width };
        const held = new Map<string, number>();
        for (const o of owners) {
          const uid = uidForOwner(held, o, r, new Set([2]));
          if (uid === null) continue;
          expect(uid).not.toBe(2);
          expect(uid).toBeGreaterThanOrEqual(r.min);
          expect(uid).toBeLessThanOrEqual(r.max);
          held.set(o, uid);
        }
        expect(new Set(held.values()).size).toBe(held.size);
      }),
    );
  });
});
