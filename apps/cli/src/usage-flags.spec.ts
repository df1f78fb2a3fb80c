import { UsageFlags, usageQueryFromFlags } from './usage-flags';

const NOW = Date.UTC(2026, 0, 15, 10, 20);

describe('usageQueryFromFlags', () => {
  it.each([
    [
      { from: '2026-01-01', granularity: 'day' },
      { from: '2026-01-01', to: '2026-01-15T11:00:00.000Z', granularity: 'day' },
    ],
    [
      { from: '2026-01-01', to: '2026-02-01', by: 'owner, queue', granularity: 'month' },
      { from: '2026-01-01', to: '2026-02-01', granularity: 'month', groupBy: 'owner,queue' },
    ],
  ] as Array<[UsageFlags, object]>)('%j', (flags, query) => expect(usageQueryFromFlags(flags, NOW)).toEqual(query));

  it('refuses an empty --by', () => expect(() => usageQueryFromFlags({ from: '2026-01-01', by: ' ', granularity: 'day' }, NOW)).toThrow(/--by needs/));
});
