import { pacedPaging } from './paced-paging';

async function pauseOf(share: number, maxPauseMs: number, pageMs: number): Promise<number> {
  const started = performance.now();
  await pacedPaging(share, maxPauseMs).betweenPages!(pageMs);
  return performance.now() - started;
}

describe('pacedPaging', () => {
  it('pauses (1 / share - 1) times what the page took', async () => {
    expect(await pauseOf(0.25, 1_000, 20)).toBeGreaterThanOrEqual(59); // 3 x 20 ms (timers may fire a ms early)
    expect(await pauseOf(1, 1_000, 500)).toBeLessThan(50); // the whole thread: no pause
  });

  it('never pauses longer than its cap', async () => {
    expect(await pauseOf(0.01, 30, 1_000)).toBeLessThan(500); // uncapped: 99 s
  });

  it.each([0, -0.5, 1.5, Number.NaN])('refuses a share of %p', (share) => {
    expect(() => pacedPaging(share, 1_000)).toThrow('share must be in (0, 1]');
  });
});
