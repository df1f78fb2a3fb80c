import type Redis from 'ioredis';

/** What an attempt to open one more stream for a token found. */
export interface StreamSlotGrant {
  granted: boolean;
  /** The token's open streams counted after this call (this one included when granted). */
  open: number;
}

/**
 * The open streams of every token, shared by the gateway replicas (contract §5.3, ADR 0036): one
 * sorted set per token, a member per open stream, scored with the time its lease runs out by
 * Redis's own clock. Every call first drops the members whose lease has run out, so the streams of
 * a replica that died without closing them stop counting one lease later; a live replica renews its
 * streams' leases well before that. The key expires with its last lease.
 * KEYS: the token's set. ARGV: member, limit, lease ms.
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, lease = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local open = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {1, open} end
if open >= limit then return {0, open} end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return {1, open + 1}
`;

/**
 * Extends the leases of the given members of one token's set (and adds those missing: a stream
 * let through while Redis did not answer counts from its first renewal on).
 * KEYS: the token's set. ARGV: lease ms, members...
 */
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], now + lease, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], lease)
return #ARGV - 1
`;

const key = (tokenKey: string) => `gantry:streams:${tokenKey}`;

type Script = (...a: unknown[]) => Promise<unknown>;

export class TokenStreamSlots {
  constructor(
    private readonly redis: Redis,
    private readonly leaseMs: number,
  ) {
    redis.defineCommand('gantryAcquireStreamSlot', { numberOfKeys: 1, lua: ACQUIRE });
    redis.defineCommand('gantryRenewStreamSlots', { numberOfKeys: 1, lua: RENEW });
  }

  /** One more open stream `member` for the token, unless it holds `limit` already (one script call). */
  async acquire(tokenKey: string, member: string, limit: number): Promise<StreamSlotGrant> {
    const [granted, open] = (await this.script('gantryAcquireStreamSlot').call(this.redis, key(tokenKey), member, limit, this.leaseMs)) as [number, number];
    return { granted: granted === 1, open };
  }

  /** Renews the leases of each token's members, in one round trip (a pipeline of one call per token). */
  async renew(members: ReadonlyMap<string, readonly string[]>): Promise<void> {
    if (members.size === 0) return;
    const pipeline = this.redis.pipeline();
    for (const [tokenKey, ids] of members) {
      if (ids.length) (pipeline as unknown as Record<string, Script>).gantryRenewStreamSlots(key(tokenKey), this.leaseMs, ...ids);
    }
    const results = await pipeline.exec();
    const failed = results?.find(([err]) => err);
    if (failed) throw failed[0];
  }

  async release(tokenKey: string, member: string): Promise<void> {
    await this.redis.zrem(key(tokenKey), member);
  }

  /** The token's open streams that still hold a lease (for tests and diagnostics). */
  async count(tokenKey: string): Promise<number> {
    const t = await this.redis.time();
    return this.redis.zcount(key(tokenKey), `(${Number(t[0]) * 1000 + Math.floor(Number(t[1]) / 1000)}`, '+inf');
  }

  private script(name: string): Script {
    return (this.redis as unknown as Record<string, Script>)[name];
  }
}
