import fc from 'fast-check';
import { utilisation } from './utilisation';

const hold = (gpus: number, startMs: number, endMs: number | null) => ({ team: 'a', gpus, startMs, endMs });
const wait = (submitMs: number, startMs: number | null) => ({ team: 'a', submitMs, startMs });

describe('utilisation', () => {
  it('counts only the moments when something waits', () => {
    // 10 GPUs. 0-10 s: 4 held, nothing waits. 10-20 s: 8 held and a job waits.
    const u = utilisation([hold(4, 0, 20_000), hold(4, 10_000, 20_000)], [wait(10_000, 20_000)], 10, 0, 20_000);
    expect(u.waitingS).toBe(10);
    expect(u.whileWaiting).toBeCloseTo(0.8, 12);
    expect(u.overall).toBeCloseTo(0.6, 12);
    expect(u.idleGpuSecondsWhileWaiting).toBeCloseTo(20, 9);
  });

  it('clips to the window and lets open holdings and waits run to its end', () => {
    const u = utilisation([hold(10, -5_000, null)], [wait(-1_000, null)], 10, 0, 10_000);
    expect(u.waitingS).toBe(10);
    expect(u.whileWaiting).toBe(1);
    expect(u.overall).toBe(1);
  });

  it('counts overlapping waits once', () => {
    const u = utilisation([], [wait(0, 6_000), wait(2_000, 8_000)], 10, 0, 10_000);
    expect(u.waitingS).toBe(8);
    expect(u.whileWaiting).toBe(0);
  });

  it('is NaN while waiting when nothing waited', () => {
    expect(utilisation([hold(1, 0, 10)], [], 1, 0, 10).whileWaiting).toBeNaN();
  });

  it('equals the overall utilisation when something waits throughout, and stays in [0, 1] (property)', () => {
    const holding = fc.tuple(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 100_000 }));
    fc.assert(
      fc.property(fc.array(holding, { maxLength: 30 }), (hs) => {
        const holdings = hs.map(([g, a, b]) => hold(g, Math.min(a, b), Math.max(a, b)));
        const fleet = Math.max(
          1,
          holdings.reduce((s, h) => s + h.gpus, 0),
        );
        const u = utilisation(holdings, [wait(0, null)], fleet, 0, 100_000);
        expect(u.whileWaiting).toBeCloseTo(u.overall, 9);
        expect(u.overall).toBeGreaterThanOrEqual(0);
        expect(u.overall).toBeLessThanOrEqual(1 + 1e-9);
      }),
    );
  });
});
