import type Redis from 'ioredis';

/** What one call took from a bucket. */
export interface BucketGrant {
  /** Tokens handed out (0..want). */
  granted: number;
  /** Whole tokens left in the bucket after this grant. */
  remaining: number;
  /** When nothing was granted: how long until one token is back, ms; 0 otherwise. */
  retryAfterMs: number;
}

/**
 * The token bucket, the one place its rule is written: it holds up to `burst` tokens and refills
 * at `rate` per second, continuously; a call takes up to `want` whole tokens. State per key: the
 * tokens (fractional) and when they were counted, by Redis's own clock, so that the gateway
 * replicas' clocks do not matter; an absent key is a full bucket, and the key expires once the
 * bucket would be full again. A clock that stepped back refills nothing.
 * KEYS: the bucket. ARGV: rate per second, burst, want.
 */
const TAKE_TOKENS = `
local rate, burst, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(b[1]), tonumber(b[2])
if tokens == nil or at == nil then tokens, at = burst, now end
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000)
  at = now
end
local granted = math.max(0, math.min(want, math.floor(tokens)))
tokens = tokens - granted
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
local retry = 0
if granted == 0 then retry = math.ceil((1 - tokens) * 1000 / rate) end
return {granted, math.floor(tokens), retry}
`;

const key = (name: string) => `gantry:rate:${name}`;

/** Token buckets shared by every gateway replica (ADR 0016). */
export class RateLimitBuckets {
  constructor(private readonly redis: Redis) {
    this.redis.defineCommand('gantryTakeTokens', { numberOfKeys: 1, lua: TAKE_TOKENS });
  }

  /** Takes up to `want` tokens from the bucket `name` (one script call). */
  async take(name: string, ratePerS: number, burst: number, want: number): Promise<BucketGrant> {
    const take = (this.redis as unknown as Record<string, (...a: unknown[]) => Promise<[number, number, number]>>).gantryTakeTokens;
    const [granted, remaining, retryAfterMs] = await take.call(this.redis, key(name), ratePerS, burst, want);
    return { granted, remaining, retryAfterMs };
  }
}
