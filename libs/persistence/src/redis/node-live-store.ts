import type Redis from 'ioredis';

/** Redis layout of live node state; this file is the only place that knows it. */
export const REDIS_KEYS = {
  node: (id: string) => `gantry:node:${id}`,
  /** ZSET nodeId -> when the control plane last heard the node (its own clock, ms). */
  lastSeen: 'gantry:nodes:last-seen',
} as const;

export interface LiveBeat {
  nodeId: string;
  bootId: string;
  seq: number;
  sentAt: number;
  receivedAt: number;
  /** Telemetry and running set as JSON, stored as is. */
  payload: string;
}

/**
 * Writes a beat only if it is newer than the stored one: same boot with a higher seq, or a new
 * boot whose sentAt is not older. Redelivered and reordered beats change nothing.
 */
const RECORD_BEAT = `
local cur = redis.call('HMGET', KEYS[1], 'bootId', 'seq', 'sentAt')
local seq = tonumber(ARGV[2])
local sentAt = tonumber(ARGV[3])
if cur[1] then
  if cur[1] == ARGV[1] then
    if tonumber(cur[2]) >= seq then return 0 end
  elseif tonumber(cur[3]) > sentAt then
    return 0
  end
end
redis.call('HSET', KEYS[1], 'bootId', ARGV[1], 'seq', seq, 'sentAt', sentAt, 'receivedAt', ARGV[4], 'payload', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[7])
return 1
`;

export class NodeLiveStore {
  constructor(private readonly redis: Redis, private readonly ttlMs: number) {
    this.redis.defineCommand('gantryRecordBeat', { numberOfKeys: 2, lua: RECORD_BEAT });
  }

  /** Records a batch of beats in one pipeline; returns how many were newer than what was stored. */
  async recordBeats(beats: LiveBeat[]): Promise<number> {
    if (beats.length === 0) return 0;
    const pipeline = this.redis.pipeline();
    for (const b of beats) {
      (pipeline as unknown as Record<string, (...a: unknown[]) => void>).gantryRecordBeat(
        REDIS_KEYS.node(b.nodeId), REDIS_KEYS.lastSeen, b.bootId, b.seq, b.sentAt, b.receivedAt, b.payload, this.ttlMs, b.nodeId,
      );
    }
    const results = (await pipeline.exec()) ?? [];
    let written = 0;
    for (const [err, value] of results) {
      if (err) throw err;
      if (value === 1) written++;
    }
    return written;
  }

  /** nodeId -> last heard (ms) for every node heard since `sinceMs`. */
  async heardSince(sinceMs: number): Promise<Map<string, number>> {
    const flat = await this.redis.zrangebyscore(REDIS_KEYS.lastSeen, sinceMs, '+inf', 'WITHSCORES');
    const result = new Map<string, number>();
    for (let i = 0; i < flat.length; i += 2) result.set(flat[i], Number(flat[i + 1]));
    return result;
  }

  async lastSeen(nodeId: string): Promise<number | null> {
    const score = await this.redis.zscore(REDIS_KEYS.lastSeen, nodeId);
    return score === null ? null : Number(score);
  }

  async livePayload(nodeId: string): Promise<Record<string, string> | null> {
    const h = await this.redis.hgetall(REDIS_KEYS.node(nodeId));
    return Object.keys(h).length ? h : null;
  }
}
