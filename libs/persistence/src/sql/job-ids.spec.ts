import { newJobId } from './job-ids';
import { sortedChildIds } from './job-arrays';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The creation time a version 7 id carries in its first 48 bits. */
const millisOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('newJobId', () => {
  it('is a version 7 UUID stamped with the time it was made', () => {
    const before = Date.now();
    const id = newJobId();
    const after = Date.now();
    expect(id).toMatch(UUID_V7);
    expect(millisOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisOf(id)).toBeLessThanOrEqual(after);
  });

  it('sorts every id after the ones made before it, within a millisecond too', () => {
    const ids = Array.from({ length: 10_000 }, newJobId);
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives array children ids in ascending order, each a version 7 UUID', () => {
    const ids = sortedChildIds(500);
    expect(ids.every((id) => UUID_V7.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
  });
});
