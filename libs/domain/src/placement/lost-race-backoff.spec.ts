import fc from 'fast-check';
import { IMMEDIATE_RETRIES_AFTER_CHANGES, LostRaceInput, lostRaceBackoffMs } from './lost-race-backoff';

const base: LostRaceInput = { placed: 0, lostLeases: 0, lostChanges: 0, changeStreak: 0, random: 0.5 };

describe('lostRaceBackoffMs (the wait after a cycle whose placements lost)', () => {
  it.each<[string, Partial<LostRaceInput>, number]>([
    ['nothing lost: no wait', {}, 0],
    ['something placed, some lost to a lease: no wait (the loop decides)', { placed: 1, lostLeases: 2 }, 0],
    ['something placed, some lost to changes: no wait', { placed: 3, lostChanges: 1, changeStreak: 0 }, 0],
    ['all lost to changes, first time: at once', { lostChanges: 1, changeStreak: 1 }, 0],
    [
      `all lost to changes, ${IMMEDIATE_RETRIES_AFTER_CHANGES} cycles in a row: still at once`,
      { lostChanges: 1, changeStreak: IMMEDIATE_RETRIES_AFTER_CHANGES },
      0,
    ],
    ['all lost to changes, one cycle more: the jittered wait', { lostChanges: 1, changeStreak: IMMEDIATE_RETRIES_AFTER_CHANGES + 1 }, 60],
    ['all lost to a lease: the jittered wait', { lostLeases: 1 }, 60],
    ['lost to a lease and to changes: the jittered wait', { lostLeases: 1, lostChanges: 2, changeStreak: 1 }, 60],
    ['the jitter at its low end', { lostLeases: 1, random: 0 }, 20],
    ['the jitter at its high end', { lostLeases: 1, random: 0.999 }, 99],
  ])('%s', (_name, over, expected) => {
    expect(lostRaceBackoffMs({ ...base, ...over })).toBe(expected);
  });

  it('waits 0 or 20–99 ms, and waits only when nothing was placed and something lost', () => {
    fc.assert(
      fc.property(
        fc.nat(5),
        fc.nat(5),
        fc.nat(5),
        fc.nat(10),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (placed, lostLeases, lostChanges, changeStreak, random) => {
          const ms = lostRaceBackoffMs({ placed, lostLeases, lostChanges, changeStreak, random });
          expect(ms === 0 || (ms >= 20 && ms < 100)).toBe(true);
          if (ms > 0) expect(placed === 0 && lostLeases + lostChanges > 0).toBe(true);
          if (placed === 0 && lostLeases > 0) expect(ms).toBeGreaterThan(0);
        },
      ),
    );
  });
});
