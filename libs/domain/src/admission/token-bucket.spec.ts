import fc from 'fast-check';
import { BucketRate, TokenBucket, bucketIsFull, refillBucket, takeFromBucket } from './token-bucket';

const rate: BucketRate = { ratePerS: 20, burst: 20 };
const at = (tokens: number, updatedAt = 0): TokenBucket => ({ tokens, updatedAt });

describe('takeFromBucket', () => {
  it.each<[string, TokenBucket | null, number, { allowed: boolean; remaining: number; retryAfterMs: number }]>([
    ['a client not seen before starts with a full bucket', null, 1000, { allowed: true, remaining: 19, retryAfterMs: 0 }],
    ['the last whole token is taken', at(1), 0, { allowed: true, remaining: 0, retryAfterMs: 0 }],
    ['an empty bucket refuses, and says when the next token comes (1/20 s)', at(0), 0, { allowed: false, remaining: 0, retryAfterMs: 50 }],
    ['half a token refuses until the other half has refilled', at(0.5), 0, { allowed: false, remaining: 0, retryAfterMs: 25 }],
    ['an empty bucket 50 ms later has one token again', at(0), 50, { allowed: true, remaining: 0, retryAfterMs: 0 }],
    ['refill stops at the burst', at(0), 60_000, { allowed: true, remaining: 19, retryAfterMs: 0 }],
    ['a clock that stepped back refills nothing', at(0, 1000), 0, { allowed: false, remaining: 0, retryAfterMs: 50 }],
  ])('%s', (_name, bucket, nowMs, expected) => {
    expect(takeFromBucket(bucket, nowMs, rate)).toMatchObject(expected);
  });

  it('lets a burst through at once, then one request per refill period', () => {
    let bucket: TokenBucket | null = null;
    const allowed = Array.from({ length: 25 }, () => {
      const t = takeFromBucket(bucket, 0, rate);
      bucket = t.bucket;
      return t.allowed;
    });
    expect(allowed.filter(Boolean)).toHaveLength(20);
    expect(takeFromBucket(bucket, 49, rate).allowed).toBe(false);
    expect(takeFromBucket(bucket, 50, rate).allowed).toBe(true);
  });

  it('never lets through more than the burst plus what refilled, over any stretch of a history', () => {
    const history = fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 300 });
    const anyRate = fc.record({ ratePerS: fc.integer({ min: 1, max: 1000 }), burst: fc.integer({ min: 1, max: 100 }) });
    fc.assert(
      fc.property(history, anyRate, (gaps, r) => {
        let bucket: TokenBucket | null = null;
        let now = 0;
        const admittedAt: number[] = [];
        for (const gap of gaps) {
          now += gap;
          const t = takeFromBucket(bucket, now, r);
          bucket = t.bucket;
          expect(t.bucket.tokens).toBeGreaterThanOrEqual(0);
          expect(t.bucket.tokens).toBeLessThanOrEqual(r.burst);
          if (t.allowed) admittedAt.push(now);
          else expect(t.retryAfterMs).toBeGreaterThan(0);
        }
        for (let i = 0; i < admittedAt.length; i++) {
          for (let j = i; j < admittedAt.length; j++) {
            // Admitted in [admittedAt[i], admittedAt[j]]: at most the burst plus the refill over that time.
            expect(j - i + 1).toBeLessThanOrEqual(r.burst + ((admittedAt[j] - admittedAt[i]) * r.ratePerS) / 1000 + 1e-6);
          }
        }
      }),
    );
  });

  it('admits a request made retryAfterMs after a refusal', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 0.999, noNaN: true }), fc.integer({ min: 1, max: 1000 }), (tokens, ratePerS) => {
        const r = { ratePerS, burst: 10 };
        const refused = takeFromBucket(at(tokens), 0, r);
        expect(refused.allowed).toBe(false);
        expect(takeFromBucket(refused.bucket, refused.retryAfterMs, r).allowed).toBe(true);
      }),
    );
  });
});

describe('bucketIsFull', () => {
  it.each<[string, TokenBucket, number, boolean]>([
    ['a bucket refilled to its burst', at(0), 1000, true],
    ['one still refilling', at(0), 999, false],
  ])('%s', (_name, bucket, nowMs, full) => {
    expect(bucketIsFull(bucket, nowMs, rate)).toBe(full);
    expect(refillBucket(bucket, nowMs, rate).tokens).toBeLessThanOrEqual(rate.burst);
  });
});
