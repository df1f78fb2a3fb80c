import { loadGapMs } from './load-gap';

describe('loadGapMs (the wait between batches, growing with the last one)', () => {
  const gap = { perItemMs: 5, maxMs: 50 };

  it.each<[string, number, { perItemMs: number; maxMs: number }, number]>([
    ['nothing in the last batch: no wait', 0, gap, 0],
    ["a lone item: one item's worth", 1, gap, 5],
    ['a few items: in proportion', 4, gap, 20],
    ['exactly at the cap', 10, gap, 50],
    ['a large batch: capped', 400, gap, 50],
    ['pacing off (maxMs 0): never a wait', 400, { perItemMs: 5, maxMs: 0 }, 0],
    ['a negative or NaN size counts as none', Number.NaN, gap, 0],
  ])('%s', (_name, size, g, expected) => {
    expect(loadGapMs(size, g)).toBe(expected);
  });

  it('converges to the cap under a steady rate above 1 / perItemMs, and stays small below it', () => {
    // A worker that takes `work` ms per batch and then waits the gap from the batch's start:
    // the next batch holds what arrived since the last one began.
    const settle = (ratePerMs: number) => {
      let size = 1;
      const work = 5;
      for (let i = 0; i < 200; i++) size = Math.max(1, Math.round(ratePerMs * Math.max(work, loadGapMs(size, gap))));
      return loadGapMs(size, gap);
    };
    expect(settle(0.5)).toBe(50); // 500 items/s
    expect(settle(0.3)).toBe(50); // 300/s
    expect(settle(0.05)).toBeLessThanOrEqual(5); // 50/s: batches of one, gaps of one item
  });
});
