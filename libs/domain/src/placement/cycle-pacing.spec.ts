import { CyclePacingInput, nextCycleDelayMs } from './cycle-pacing';

const base: CyclePacingInput = {
  pending: null,
  blocked: false,
  lastCycleStartedMs: 1_000,
  lastCycleEndedMs: 1_010,
  nowMs: 1_020,
  intervalMs: 1_000,
  blockedGapMs: 100,
};

const loadGap = { perItemMs: 5, maxMs: 50 };

describe('nextCycleDelayMs (when the scheduler cycles again)', () => {
  it.each<[string, Partial<CyclePacingInput>, number]>([
    ['no wake-up: the tick, an interval after the last cycle ended', {}, 990],
    ['no wake-up, tick already due', { nowMs: 2_500 }, 0],
    ['freed capacity: at once', { pending: 'capacity' }, 0],
    ['freed capacity while blocked: at once', { pending: 'capacity', blocked: true }, 0],
    ['new work, last cycle placed: at once', { pending: 'new-work' }, 0],
    ['new work while blocked: a gap after the last cycle began', { pending: 'new-work', blocked: true }, 80],
    ['new work while blocked, gap over', { pending: 'new-work', blocked: true, nowMs: 1_150 }, 0],
    ['new work while blocked, tick sooner than the gap', { pending: 'new-work', blocked: true, intervalMs: 50 }, 40],
    ['blocked with no wake-up: only the tick', { blocked: true }, 990],
    ['new work after two blocked cycles in a row: twice the gap', { pending: 'new-work', blocked: true, blockedCycles: 2 }, 180],
    ['new work after three: four times the gap', { pending: 'new-work', blocked: true, blockedCycles: 3 }, 380],
    ['new work after many: never past the tick', { pending: 'new-work', blocked: true, blockedCycles: 50 }, 990],
    ['freed capacity after many blocked cycles: still at once', { pending: 'capacity', blocked: true, blockedCycles: 50 }, 0],
    // Pacing under load (loadGapMs, 5 ms per placement up to 50): from the last cycle's start, 20 ms ago.
    ['new work after a cycle that placed one: at once (its gap is over)', { pending: 'new-work', lastPlaced: 1, loadGap }, 0],
    ['new work after a cycle that placed six: until 30 ms after it began', { pending: 'new-work', lastPlaced: 6, loadGap }, 10],
    ['freed capacity after a cycle that placed forty: until the cap', { pending: 'capacity', lastPlaced: 40, loadGap }, 30],
    ['freed capacity that jobs the last cycle left wait for: at once', { pending: 'capacity', lastPlaced: 40, leftWaiting: true, loadGap }, 0],
    ['new work while jobs wait: still the gap', { pending: 'new-work', lastPlaced: 40, leftWaiting: true, loadGap }, 30],
    ['the gap never shortens the blocked back-off', { pending: 'new-work', blocked: true, lastPlaced: 40, loadGap }, 80],
    ['no wake-up after a large cycle: the tick', { lastPlaced: 40, loadGap }, 990],
    ['pacing off: at once whatever the last cycle placed', { pending: 'new-work', lastPlaced: 400, loadGap: { perItemMs: 5, maxMs: 0 } }, 0],
  ])('%s', (_name, over, expected) => {
    expect(nextCycleDelayMs({ ...base, ...over })).toBe(expected);
  });

  it('never waits longer than the tick, and never negative', () => {
    for (const pending of [null, 'new-work', 'capacity'] as const) {
      for (const [blocked, blockedCycles] of [
        [false, 0],
        [true, 1],
        [true, 4],
        [true, 1000],
      ] as const) {
        for (let now = 1_010; now < 3_000; now += 37) {
          const d = nextCycleDelayMs({ ...base, pending, blocked, blockedCycles, nowMs: now });
          expect(d).toBeGreaterThanOrEqual(0);
          expect(now + d).toBeLessThanOrEqual(Math.max(now, base.lastCycleEndedMs + base.intervalMs));
        }
      }
    }
  });
});
