/**
 * A token bucket held in one process: it holds up to `burst` tokens and refills at `ratePerS` a
 * second, continuously; each request takes one whole token or is refused. The shared buckets of
 * the per-token rate limit live in Redis (libs/persistence, rate-limit-buckets.ts, ADR 0016); this
 * is the same rule for buckets that need not be shared (the anonymous limit per client address,
 * the failure detector's evictions).
 */
export interface TokenBucket {
  /** Tokens in the bucket (fractional). */
  tokens: number;
  /** When they were counted, ms. */
  updatedAt: number;
}

export interface BucketRate {
  /** Refill, tokens per second (> 0). */
  ratePerS: number;
  /** Most tokens held (>= 1). */
  burst: number;
}

export interface BucketTake {
  bucket: TokenBucket;
  allowed: boolean;
  /** Whole tokens left after this take. */
  remaining: number;
  /** When refused: how long until one token is back, ms (> 0); 0 when allowed. */
  retryAfterMs: number;
}

/** A bucket as a new client finds it: full. */
export function fullBucket(nowMs: number, rate: BucketRate): TokenBucket {
  return { tokens: rate.burst, updatedAt: nowMs };
}

/**
 * The bucket at `nowMs`: refilled for the time since it was counted, capped at the burst. A clock
 * that stepped back refills nothing and counts on from its new reading.
 */
export function refillBucket(bucket: TokenBucket, nowMs: number, rate: BucketRate): TokenBucket {
  const elapsedS = Math.max(0, nowMs - bucket.updatedAt) / 1000;
  return { tokens: Math.min(rate.burst, bucket.tokens + elapsedS * rate.ratePerS), updatedAt: nowMs };
}

/** Takes one token at `nowMs` from `bucket` (null: a client not seen before, or forgotten). */
export function takeFromBucket(bucket: TokenBucket | null, nowMs: number, rate: BucketRate): BucketTake {
  const b = refillBucket(bucket ?? fullBucket(nowMs, rate), nowMs, rate);
  if (b.tokens >= 1) {
    const after = { tokens: b.tokens - 1, updatedAt: b.updatedAt };
    return { bucket: after, allowed: true, remaining: Math.floor(after.tokens), retryAfterMs: 0 };
  }
  return { bucket: b, allowed: false, remaining: 0, retryAfterMs: Math.max(1, Math.ceil(((1 - b.tokens) * 1000) / rate.ratePerS)) };
}

/** True when a bucket last counted at `bucket` would be full again by `nowMs`: forgetting it changes nothing. */
export function bucketIsFull(bucket: TokenBucket, nowMs: number, rate: BucketRate): boolean {
  return refillBucket(bucket, nowMs, rate).tokens >= rate.burst;
}
