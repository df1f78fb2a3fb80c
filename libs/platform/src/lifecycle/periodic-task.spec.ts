import { PeriodicTask } from './periodic-task';

describe('PeriodicTask', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A round that stays in flight until released. */
  function slowRounds() {
    const releases: (() => void)[] = [];
    let started = 0;
    const round = () => {
      started++;
      return new Promise<void>((resolve) => releases.push(resolve));
    };
    return { round, releases, started: () => started };
  }

  it('runs a round each period, and skips ticks while one is still in flight', async () => {
    const r = slowRounds();
    const task = new PeriodicTask(100, r.round, () => undefined);
    task.start();
    await jest.advanceTimersByTimeAsync(350);
    expect(r.started()).toBe(1); // three ticks, one round: it has not ended
    r.releases[0]();
    await jest.advanceTimersByTimeAsync(100);
    expect(r.started()).toBe(2);
    r.releases[1]();
    await task.stop();
  });

  it('hands a failed round to onError and runs the next one', async () => {
    const errors: unknown[] = [];
    let n = 0;
    const task = new PeriodicTask(
      100,
      async () => {
        if (++n === 1) throw new Error('boom');
      },
      (e) => errors.push(e),
    );
    task.start();
    await jest.advanceTimersByTimeAsync(250);
    expect(n).toBe(2);
    expect(errors).toEqual([new Error('boom')]);
    await task.stop();
  });

  it('stop waits for the round in flight and starts no other', async () => {
    const r = slowRounds();
    const task = new PeriodicTask(100, r.round, () => undefined);
    task.start();
    await jest.advanceTimersByTimeAsync(100);
    let stopped = false;
    const stopping = task.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(500);
    expect(stopped).toBe(false);
    r.releases[0]();
    await stopping;
    expect(r.started()).toBe(1);
  });
});
