import fc from 'fast-check';
import { BucketGrant } from '@gantry/persistence';
import { LEASE_MS, RateDecision, SharedBuckets, TokenRateLimiter } from './token-rate-limiter';

/** A shared bucket holding whole tokens that the test refills by hand, recording every call. */
class FakeBuckets implements SharedBuckets {
  calls: Array<{ name: string; want: number }> = [];
  available = new Map<string, number>();
  failing = false;
  granted = 0;
  async take(name: string, _rate: number, burst: number, want: number): Promise<BucketGrant> {
    this.calls.push({ name, want });
    if (this.failing) throw new Error('redis down');
    const have = this.available.get(name) ?? burst;
    const granted = Math.min(want, have);
    this.available.set(name, have - granted);
    this.granted += granted;
    return { granted, remaining: have - granted, retryAfterMs: granted === 0 ? 250 : 0 };
  }
}

const limits = { ratePerS: 1000, burst: 2000 };
const setup = () => {
  const buckets = new FakeBuckets();
  let now = 0;
  const limiter = new TokenRateLimiter(buckets, () => now);
  return { buckets, limiter, advance: (ms: number) => (now += ms) };
};

describe('TokenRateLimiter', () => {
  it('takes a lease of 10 ms of refill and spends it locally: one shared call per ten requests', async () => {
    const { buckets, limiter } = setup();
    const decisions: RateDecision[] = [];
    for (let i = 0; i < 25; i++) decisions.push(await limiter.take('t', limits));
    expect(decisions.every((d) => d.allowed && d.checked)).toBe(true);
    expect(buckets.calls).toEqual([
      { name: 't', want: 10 },
      { name: 't', want: 10 },
      { name: 't', want: 10 },
    ]);
    // Remaining: what the bucket had left plus what is left of the lease.
    expect(decisions[0]).toMatchObject({ limit: 2000, remaining: 1999 });
    expect(decisions[24]).toMatchObject({ remaining: 1975 });
  });

  it('answers from the lease synchronously once it holds tokens', async () => {
    const { limiter } = setup();
    await limiter.take('t', limits);
    expect(limiter.take('t', limits)).toMatchObject({ allowed: true });
  });

  it('shares one call among concurrent requests, asking for as many tokens as are waiting', async () => {
    const { buckets, limiter } = setup();
    const all = await Promise.all(Array.from({ length: 30 }, () => limiter.take('t', limits)));
    expect(all.every((d) => d.allowed)).toBe(true);
    expect(buckets.calls).toEqual([{ name: 't', want: 30 }]);
  });

  it('refuses with Retry-After when the bucket is empty, then without asking until the bucket said a token is back', async () => {
    const { buckets, limiter, advance } = setup();
    buckets.available.set('t', 3);
    const first = await Promise.all(Array.from({ length: 5 }, () => limiter.take('t', limits)));
    expect(first.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(first[3]).toMatchObject({ remaining: 0, retryAfterS: 1 });
    const calls = buckets.calls.length;
    expect(await limiter.take('t', limits)).toMatchObject({ allowed: false });
    advance(249);
    expect(await limiter.take('t', limits)).toMatchObject({ allowed: false });
    expect(buckets.calls.length).toBe(calls);
    advance(1);
    buckets.available.set('t', 1);
    expect(await limiter.take('t', limits)).toMatchObject({ allowed: true });
    expect(buckets.calls.length).toBe(calls + 1);
  });

  it('forfeits a lease not spent within LEASE_MS', async () => {
    const { buckets, limiter, advance } = setup();
    await limiter.take('t', limits);
    advance(LEASE_MS);
    await limiter.take('t', limits);
    expect(buckets.calls.length).toBe(2);
  });

  it('keeps keys apart', async () => {
    const { buckets, limiter } = setup();
    buckets.available.set('a', 0);
    expect(await limiter.take('a', limits)).toMatchObject({ allowed: false });
    expect(await limiter.take('b', limits)).toMatchObject({ allowed: true });
  });

  it('lets requests through unchecked while the shared bucket does not answer, and asks again a second later', async () => {
    const { buckets, limiter, advance } = setup();
    buckets.failing = true;
    expect(await limiter.take('t', limits)).toMatchObject({ allowed: true, checked: false });
    expect(await limiter.take('t', limits)).toMatchObject({ allowed: true, checked: false });
    expect(buckets.calls.length).toBe(1);
    buckets.failing = false;
    advance(1000);
    expect(await limiter.take('t', limits)).toMatchObject({ allowed: true, checked: true });
  });

  it('never lets more requests through, over any replicas and timing, than the shared bucket granted', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ replica: fc.nat(2), concurrent: fc.integer({ min: 1, max: 40 }), advanceMs: fc.nat(1500) }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 0, max: 300 }),
        async (steps, stock) => {
          const buckets = new FakeBuckets();
          buckets.available.set('t', stock);
          let now = 0;
          const replicas = [0, 1, 2].map(() => new TokenRateLimiter(buckets, () => now));
          let allowed = 0;
          for (const s of steps) {
            const ds = await Promise.all(Array.from({ length: s.concurrent }, () => replicas[s.replica].take('t', { ratePerS: 1000, burst: 2000 })));
            allowed += ds.filter((d) => d.allowed).length;
            now += s.advanceMs;
          }
          expect(allowed).toBeLessThanOrEqual(buckets.granted);
          expect(buckets.granted).toBeLessThanOrEqual(stock);
        },
      ),
      { numRuns: 200 },
    );
  });
});
