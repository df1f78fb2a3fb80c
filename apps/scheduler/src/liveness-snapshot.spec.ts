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
    const zset = new Map([
      ['a', 1_000],
      ['b', 5_000],
    ]);
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
    expect(snap.takeChanges()).toBe('all');
    zset.clear(); // a Redis flush
    await snap.refresh(3_000, 40_000);
    expect(snap.lastHeard('a')).toBe(1_000); // kept (and ageing) until the next full read
    await snap.refresh(62_000, 40_000); // the full read starts beside this refresh
    await new Promise((r) => setImmediate(r));
    await snap.refresh(62_500, 40_000); // and is taken in here
    expect(snap.lastHeard('a')).toBeNull();
    expect([...(snap.takeChanges() as Set<string>)]).toEqual(['a']);
  });

  it('counts as changed only the nodes whose time a full read changes, and passes its paging on', async () => {
    const zset = new Map([
      ['same', 30_000],
      ['moved', 30_000],
    ]);
    const pagings: unknown[] = [];
    const paging = { pageSize: 7 };
    const live = {
      async heardSince(s: number, p?: unknown) {
        pagings.push(p);
        return new Map([...zset].filter(([, at]) => at >= s));
      },
    } as unknown as NodeLiveStore;
    const snap = new LivenessSnapshot(live, 500, 60_000, paging);
    await snap.refresh(2_000, 40_000);
    snap.takeChanges();
    zset.set('moved', 25_000); // lower than what the snapshot holds: only a full read brings it
    await snap.refresh(62_000, 40_000);
    await new Promise((r) => setImmediate(r));
    await snap.refresh(62_500, 40_000);
    expect([snap.lastHeard('same'), snap.lastHeard('moved')]).toEqual([30_000, 25_000]);
    expect([...(snap.takeChanges() as Set<string>)]).toEqual(['moved']);
    expect(pagings).toEqual([undefined, paging, undefined, undefined]); // the first full read is not paced; the periodic one is
  });

  it('does not hold a refresh for the periodic full read; taken in, it keeps what the reads since it began heard', async () => {
    const zset = new Map([
      ['a', 1_000],
      ['b', 1_000],
      ['gone', 1_000],
    ]);
    let release: () => void = () => undefined;
    const slow = new Promise<void>((r) => (release = r));
    const since: number[] = [];
    const live = {
      async heardSince(s: number) {
        since.push(s);
        const answer = new Map([...zset].filter(([, at]) => at >= s));
        if (since.length === 2) await slow; // the second full read: what Redis held when it was asked
        return answer;
      },
    } as unknown as NodeLiveStore;
    const snap = new LivenessSnapshot(live, 500, 60_000);
    await snap.refresh(2_000, 40_000);
    zset.delete('gone'); // a node removed from Redis
    zset.set('a', 61_000);
    await snap.refresh(62_000, 40_000); // the full read starts (and sees a at 61,000); changes are read meanwhile
    zset.set('b', 62_500);
    zset.set('c', 62_600); // a node first heard after the full read began
    await snap.refresh(63_000, 40_000);
    expect([snap.lastHeard('a'), snap.lastHeard('b'), snap.lastHeard('c'), snap.lastHeard('gone')]).toEqual([61_000, 62_500, 62_600, 1_000]);
    expect(since).toHaveLength(4);
    release();
    await new Promise((r) => setImmediate(r));
    snap.takeChanges();
    await snap.refresh(64_000, 40_000);
    expect([snap.lastHeard('a'), snap.lastHeard('b'), snap.lastHeard('c'), snap.lastHeard('gone')]).toEqual([61_000, 62_500, 62_600, null]);
    // Only what the full read changed counts as changed: here the node it forgot.
    expect([...(snap.takeChanges() as Set<string>)]).toEqual(['gone']);
  });
});
