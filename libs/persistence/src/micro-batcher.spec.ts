import { MicroBatcher, OverloadedError } from './micro-batcher';

/** A run whose batches stay open until released, so a test controls what is in flight. */
function gatedRun() {
  const batches: number[][] = [];
  const gates: Array<() => void> = [];
  const run = (items: number[]) => {
    batches.push(items);
    return new Promise<number[]>((resolve) => gates.push(() => resolve(items.map((i) => i * 10))));
  };
  return { batches, release: () => gates.shift()!(), run };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('MicroBatcher', () => {
  it('starts a lone item at once, then batches what arrives while every slot is busy', async () => {
    const g = gatedRun();
    const b = new MicroBatcher({ maxBatch: 100, maxInFlight: 1, run: g.run });
    const first = b.submit(1);
    const rest = [2, 3, 4].map((i) => b.submit(i));
    expect(g.batches).toEqual([[1]]);
    expect(b.backlog).toBe(3);
    g.release();
    expect(await first).toBe(10);
    await flush();
    expect(g.batches).toEqual([[1], [2, 3, 4]]);
    g.release();
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
  });

  it.each([
    // maxBatch, maxInFlight, items submitted while nothing completes -> batches started
    [2, 1, 5, [[0]]],
    [2, 3, 5, [[0], [1], [2]]],
    [10, 2, 3, [[0], [1]]],
  ])('maxBatch %d, maxInFlight %d, %d items -> %j started', async (maxBatch, maxInFlight, n, started) => {
    const g = gatedRun();
    const b = new MicroBatcher({ maxBatch, maxInFlight, run: g.run });
    for (let i = 0; i < n; i++) void b.submit(i);
    expect(g.batches).toEqual(started);
  });

  it('caps a batch at maxBatch and keeps the rest for the next', async () => {
    const g = gatedRun();
    const b = new MicroBatcher({ maxBatch: 2, maxInFlight: 1, run: g.run });
    const all = [0, 1, 2, 3, 4].map((i) => b.submit(i));
    for (let i = 0; i < 3; i++) {
      g.release();
      await flush();
    }
    expect(g.batches).toEqual([[0], [1, 2], [3, 4]]);
    expect(await Promise.all(all)).toEqual([0, 10, 20, 30, 40]);
  });

  it('rejects every item of a batch that throws, or returns the wrong number of results, and goes on', async () => {
    let call = 0;
    const b = new MicroBatcher<number, number>({
      maxBatch: 10,
      maxInFlight: 1,
      run: async (items) => {
        call++;
        if (call === 1) throw new Error('boom');
        if (call === 2) return [];
        return items;
      },
    });
    await expect(b.submit(1)).rejects.toThrow('boom');
    await expect(b.submit(2)).rejects.toThrow('batch of 1 returned 0 results');
    expect(await b.submit(3)).toBe(3);
  });

  describe('admission control', () => {
    it('refuses, without running them, the items that waited past maxWaitMs, and new items while the oldest has', async () => {
      const g = gatedRun();
      let now = 0;
      const b = new MicroBatcher({ maxBatch: 10, maxInFlight: 1, run: g.run, maxWaitMs: 100, now: () => now });
      const first = b.submit(1); // runs at once
      const early = b.submit(2);
      now = 60;
      const late = b.submit(3);
      now = 101; // item 2 has waited 101 ms, item 3 41 ms
      const refusedAtOnce = b.submit(4);
      await expect(refusedAtOnce).rejects.toEqual(new OverloadedError('waited-too-long'));
      expect(b.backlog).toBe(2);
      g.release();
      expect(await first).toBe(10);
      await expect(early).rejects.toBeInstanceOf(OverloadedError);
      await flush();
      expect(g.batches).toEqual([[1], [3]]);
      g.release();
      expect(await late).toBe(30);
      await flush();
      // Drained: a new item is taken again.
      const again = b.submit(5);
      expect(g.batches).toEqual([[1], [3], [5]]);
      g.release();
      expect(await again).toBe(50);
    });

    it('sheds new items while the oldest has waited past shedNewAfterMs, and still runs what waits', async () => {
      const g = gatedRun();
      let now = 0;
      const b = new MicroBatcher({ maxBatch: 10, maxInFlight: 1, run: g.run, maxWaitMs: 1000, shedNewAfterMs: 100, now: () => now });
      const first = b.submit(1); // runs at once
      const waiting = b.submit(2);
      now = 100;
      const atTheLimit = b.submit(3); // item 2 has waited exactly 100 ms: still taken
      now = 101;
      await expect(b.submit(4)).rejects.toEqual(new OverloadedError('shedding'));
      g.release();
      expect(await first).toBe(10);
      await flush();
      expect(g.batches).toEqual([[1], [2, 3]]); // waited 101 ms, under maxWaitMs: run, not refused
      g.release();
      expect(await Promise.all([waiting, atTheLimit])).toEqual([20, 30]);
    });

    it('refuses at once past maxBacklog waiting items', async () => {
      const g = gatedRun();
      const b = new MicroBatcher({ maxBatch: 10, maxInFlight: 1, run: g.run, maxBacklog: 2 });
      const accepted = [b.submit(1), b.submit(2), b.submit(3)]; // one running, two waiting
      await expect(b.submit(4)).rejects.toEqual(new OverloadedError('backlog-full'));
      g.release();
      await flush();
      g.release();
      expect(await Promise.all(accepted)).toEqual([10, 20, 30]);
    });
  });

  describe('gapAfterMs (pacing under load)', () => {
    afterEach(() => jest.useRealTimers());

    it('holds the next run until the gap after the last one began, and sends what arrived meanwhile together', async () => {
      jest.useFakeTimers({ doNotFake: ['setImmediate'] });
      let now = 0;
      const g = gatedRun();
      const b = new MicroBatcher({ maxBatch: 100, maxInFlight: 1, run: g.run, now: () => now, gapAfterMs: (items) => items.length * 10 });
      void b.submit(1); // a lone item after a quiet spell: at once
      expect(g.batches).toEqual([[1]]);
      g.release();
      await flush();
      now = 4;
      const later = [2, 3, 4].map((i) => b.submit(i)); // 4 ms after a run of one item: 6 ms to wait
      await flush();
      expect(g.batches).toEqual([[1]]);
      now = 10;
      jest.advanceTimersByTime(6);
      expect(g.batches).toEqual([[1], [2, 3, 4]]);
      g.release();
      expect(await Promise.all(later)).toEqual([20, 30, 40]);
      // That run of three began at 10: the next may start at 40.
      now = 35;
      void b.submit(5);
      await flush();
      expect(g.batches).toEqual([[1], [2, 3, 4]]);
      now = 40;
      jest.advanceTimersByTime(5);
      expect(g.batches).toEqual([[1], [2, 3, 4], [5]]);
    });

    it('a gap of 0 never holds anything back', async () => {
      const g = gatedRun();
      const b = new MicroBatcher({ maxBatch: 100, maxInFlight: 1, run: g.run, gapAfterMs: () => 0 });
      void b.submit(1);
      g.release();
      await flush();
      void b.submit(2);
      expect(g.batches).toEqual([[1], [2]]);
    });
  });
});
