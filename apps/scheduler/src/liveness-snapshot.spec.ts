import { NodeLiveStore } from '@gantry/persistence';
import { LivenessSnapshot } from './liveness-snapshot';

/** A fake store over a fixed ZSET of last-heard times, recording the `since` of each read. */
function store(zset: Map<string, number>) {
  const since: number[] = [];
  const live = {
    async heardSince(s: number) {
      since.push(s);
      return new Map([...zset].filter(([, at]) => at >= s));
    },
  } as unknown as NodeLiveStore;
  return { live, since };
}

describe('LivenessSnapshot', () => {
  it('reads everything heard within the dead timeout first, then only beats since the newest seen, less the lag', async () => {
    const zset = new Map([['a', 1_000], ['b', 5_000]]);
    const { live, since } = store(zset);
    const snap = new LivenessSnapshot(live, 500, 60_000);
    await snap.refresh(10_000, 40_000);
    expect(snap.takeChanges()).toBe('all');
    zset.set('a', 9_000);
    await snap.refresh(11_000, 40_000);
    expect(since).toEqual([10_000 - 40_000, 5_000 - 500]);
    expect([snap.lastHeard('a'), snap.lastHeard('b'), snap.lastHeard('c')]).toEqual([9_000, 5_000, null]);
    expect([...(snap.takeChanges() as Set<string>)]).toEqual(['a']);
    expect([...(snap.takeChanges() as Set<string>)]).toEqual([]);
  });

  it('reads everything again when the full period is up, forgetting nodes no longer in Redis', async () => {
    const zset = new Map([['a', 1_000]]);
    const { live } = store(zset);
    const snap = new LivenessSnapshot(live, 500, 60_000);
    await snap.refresh(2_000, 40_000);
    zset.clear(); // a Redis flush
    await snap.refresh(3_000, 40_000);
    expect(snap.lastHeard('a')).toBe(1_000); // kept (and ageing) until the next full read
    await snap.refresh(62_000, 40_000);
    expect(snap.lastHeard('a')).toBeNull();
    expect(snap.takeChanges()).toBe('all');
  });
});
