import { startTimedOut } from './start-timeout';

describe('startTimedOut', () => {
  const TIMEOUT = 300_000;
  it.each<[string, number, number, number | null, boolean]>([
    ['just placed', 1_000_000, 1_000_000, 0, false],
    ['a moment short of the timeout', 1_000_000, 1_299_999, 0, false],
    ['at the timeout', 1_000_000, 1_300_000, 0, true],
    ['long past it', 1_000_000, 9_000_000, 0, true],
    ['past it by the clock, but the view only counts since a restart a minute ago', 1_000_000, 1_400_000, 1_340_000, false],
    ['a full timeout since the view became continuous again', 1_000_000, 1_640_000, 1_340_000, true],
    ['the view is stale now: never', 1_000_000, 9_000_000, null, false],
    ['a placement after the view resumed counts from itself', 2_000_000, 2_300_000, 1_000_000, true],
  ])('%s', (_n, placedAt, now, absenceFrom, timedOut) => {
    expect(startTimedOut(placedAt, now, TIMEOUT, absenceFrom)).toBe(timedOut);
  });
});
