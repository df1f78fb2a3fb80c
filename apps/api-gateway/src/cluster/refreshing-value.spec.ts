import { RefreshingValue } from './refreshing-value';

describe('RefreshingValue', () => {
  it('loads once, serves the cached value while fresh, then serves stale while one refresh runs', async () => {
    let now = 0;
    let loads = 0;
    let release: (() => void) | null = null;
    const v = new RefreshingValue(
      async () => {
        loads++;
        if (loads > 1) await new Promise<void>((r) => (release = r));
        return loads;
      },
      1000,
      () => now,
    );
    expect(await v.get()).toBe(1);
    now = 999;
    expect(await v.get()).toBe(1);
    expect(loads).toBe(1);
    now = 1000;
    expect(await v.get()).toBe(1); // stale, refresh started
    expect(await v.get()).toBe(1); // refresh still running: not started twice
    expect(loads).toBe(2);
    release!();
    await new Promise((r) => setImmediate(r));
    expect(await v.get()).toBe(2);
  });

  it('keeps the old value when a refresh fails, and the first load surfaces its error', async () => {
    let now = 0;
    let fail = false;
    const v = new RefreshingValue(
      async () => {
        if (fail) throw new Error('down');
        return 'ok';
      },
      10,
      () => now,
    );
    expect(await v.get()).toBe('ok');
    fail = true;
    now = 100;
    expect(await v.get()).toBe('ok');
    const empty = new RefreshingValue(async () => Promise.reject(new Error('down')), 10);
    await expect(empty.get()).rejects.toThrow('down');
  });

  it('with waitWhenStale, makes a reader of an expired value wait for the refresh, one load for all', async () => {
    let now = 0;
    let loads = 0;
    const v = new RefreshingValue(
      async () => ++loads,
      1000,
      () => now,
      true,
    );
    expect(await v.get()).toBe(1);
    now = 500;
    expect(await v.get()).toBe(1);
    now = 1000;
    expect(await Promise.all([v.get(), v.get()])).toEqual([2, 2]);
    expect(loads).toBe(2);
  });
});
