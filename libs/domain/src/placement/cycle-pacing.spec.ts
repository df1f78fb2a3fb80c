import { CyclePacingInput, nextCycleDelayMs } from './cycle-pacing';

const base: CyclePacingInput = {
  pending: null, blocked: false, lastCycleStartedMs: 1_000, lastCycleEndedMs: 1_010, nowMs: 1_020, intervalMs: 1_000, blockedGapMs: 100,
};

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
  ])('%s', (_name, over, expected) => {
    expect(nextCycleDelayMs({ ...base, ...over })).toBe(expected);
  });

  it('never waits longer than the tick, and never negative', () => {
    for (const pending of [null, 'new-work', 'capacity'] as const) {
      for (const [blocked, blockedCycles] of [[false, 0], [true, 1], [true, 4], [true, 1000]] as const) {
        for (let now = 1_010; now < 3_000; now += 37) {
          const d = nextCycleDelayMs({ ...base, pending, blocked, blockedCycles, nowMs: now });
          expect(d).toBeGreaterThanOrEqual(0);
          expect(now + d).toBeLessThanOrEqual(Math.max(now, base.lastCycleEndedMs + base.intervalMs));
        }
      }
    }
  });
});
