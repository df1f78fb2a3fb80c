import fc from 'fast-check';
import { TeamDemand, entitlements } from './entitlement';

const team = (t: string, weight: number, used: number, backlogged: boolean): TeamDemand => ({ team: t, weight, used, backlogged });

describe('entitlements', () => {
  it.each([
    ['all backlogged: by weight', [team('a', 3, 500, true), team('b', 1, 500, true)], { a: 750, b: 250 }],
    [
      'a satisfied team keeps what it used, the rest split by weight',
      [team('a', 1, 100, false), team('b', 2, 600, true), team('c', 1, 300, true)],
      { a: 100, b: 600, c: 300 },
    ],
    ['a satisfied team above its level is cut to it', [team('a', 1, 600, false), team('b', 1, 400, true)], { a: 500, b: 500 }],
    ['nobody backlogged: everyone satisfied', [team('a', 1, 10, false), team('b', 5, 20, false)], { a: 10, b: 20 }],
    ['a team that used nothing while backlogged is still entitled', [team('a', 1, 0, true), team('b', 1, 1000, true)], { a: 500, b: 500 }],
    ['weight 0 is entitled to nothing', [team('a', 0, 100, true), team('b', 1, 100, true)], { a: 0, b: 200 }],
  ])('%s', (_name, teams, expected) => {
    const got = entitlements(teams);
    for (const [t, v] of Object.entries(expected)) expect(got.get(t)).toBeCloseTo(v, 9);
  });

  it('divides exactly what was used, never gives a satisfied team more than it used, and favours no backlogged team over its weight (property)', () => {
    const demand = fc.record({
      weight: fc.double({ min: 0.1, max: 10, noNaN: true }),
      used: fc.double({ min: 0, max: 1000, noNaN: true }),
      backlogged: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(demand, { minLength: 1, maxLength: 8 }), (ds) => {
        const teams = ds.map((d, i) => ({ team: `t${i}`, ...d }));
        const got = entitlements(teams);
        const total = teams.reduce((s, t) => s + t.used, 0);
        expect([...got.values()].reduce((s, x) => s + x, 0)).toBeCloseTo(total, 6);
        for (const t of teams) if (!t.backlogged) expect(got.get(t.team)!).toBeLessThanOrEqual(t.used + 1e-9);
        const levels = teams.filter((t) => t.backlogged).map((t) => got.get(t.team)! / t.weight);
        for (const l of levels) expect(l).toBeCloseTo(levels[0], 6);
      }),
    );
  });
});
