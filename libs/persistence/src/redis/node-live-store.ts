import type Redis from 'ioredis';

/** Redis layout of live node state; this file is the only place that knows it. */
export const REDIS_KEYS = {
  node: (id: string) => `gantry:node:${id}`,
  /** ZSET nodeId -> when the control plane last heard the node (its own clock, ms). */
  lastSeen: 'gantry:nodes:last-seen',
  /** Hash of running sums over the nodes heard within the dead timeout: nodes, gpus, gpuUtilMilli, cpuUtilMilli. */
  utilisation: 'gantry:cluster:utilisation',
  /** String: last-seen score up to which silent nodes have been taken out of the running sums. */
  utilisationSweptUntil: 'gantry:cluster:utilisation:swept-until',
} as const;

export interface LiveBeat {
  nodeId: string;
  bootId: string;
  seq: number;
  sentAt: number;
  receivedAt: number;
  /** Telemetry and running set as JSON, stored as is. */
  payload: string;
  /** What the node adds to the cluster's utilisation sums (zeros when absent). */
  contribution?: { gpus: number; gpuUtilMilli: number; cpuUtilMilli: number };
}

/**
 * Writes a beat only if it is newer than the stored one: same boot with a higher seq, or a new
 * boot whose sentAt is not older. Redelivered and reordered beats change nothing.
 * A written beat also replaces the node's contribution to the cluster's utilisation sums: the
 * difference from the contribution stored in its hash (cg, cgu, ccu; absent when the node is not
 * counted) goes into the sums, so the summary reads four integers instead of 50,000 hashes.
 */
const RECORD_BEAT = `
local cur = redis.call('HMGET', KEYS[1], 'bootId', 'seq', 'sentAt', 'cg', 'cgu', 'ccu')
local seq = tonumber(ARGV[2])
local sentAt = tonumber(ARGV[3])
if cur[1] then
  if cur[1] == ARGV[1] then
    if tonumber(cur[2]) >= seq then return 0 end
  elseif tonumber(cur[3]) > sentAt then
    return 0
  end
end
local g, gu, cu = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
redis.call('HSET', KEYS[1], 'bootId', ARGV[1], 'seq', seq, 'sentAt', sentAt, 'receivedAt', ARGV[4], 'payload', ARGV[5], 'cg', g, 'cgu', gu, 'ccu', cu)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[7])
if cur[4] then
  if g ~= tonumber(cur[4]) then redis.call('HINCRBY', KEYS[3], 'gpus', g - tonumber(cur[4])) end
  if gu ~= tonumber(cur[5]) then redis.call('HINCRBY', KEYS[3], 'gpuUtilMilli', gu - tonumber(cur[5])) end
  if cu ~= tonumber(cur[6]) then redis.call('HINCRBY', KEYS[3], 'cpuUtilMilli', cu - tonumber(cur[6])) end
else
  redis.call('HINCRBY', KEYS[3], 'nodes', 1)
  redis.call('HINCRBY', KEYS[3], 'gpus', g)
  redis.call('HINCRBY', KEYS[3], 'gpuUtilMilli', gu)
  redis.call('HINCRBY', KEYS[3], 'cpuUtilMilli', cu)
end
return 1
`;

export class NodeLiveStore {
  constructor(private readonly redis: Redis, private readonly ttlMs: number) {
    this.redis.defineCommand('gantryRecordBeat', { numberOfKeys: 3, lua: RECORD_BEAT });
  }

  /** Records a batch of beats in one pipeline; returns how many were newer than what was stored. */
  async recordBeats(beats: LiveBeat[]): Promise<number> {
    if (beats.length === 0) return 0;
    const pipeline = this.redis.pipeline();
    for (const b of beats) {
      const c = b.contribution ?? { gpus: 0, gpuUtilMilli: 0, cpuUtilMilli: 0 };
      (pipeline as unknown as Record<string, (...a: unknown[]) => void>).gantryRecordBeat(
        REDIS_KEYS.node(b.nodeId), REDIS_KEYS.lastSeen, REDIS_KEYS.utilisation,
        b.bootId, b.seq, b.sentAt, b.receivedAt, b.payload, this.ttlMs, b.nodeId, c.gpus, c.gpuUtilMilli, c.cpuUtilMilli,
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

  /** When the newest beat of any node was written: the ingestion watermark. */
  async newestBeat(): Promise<number | null> {
    const top = await this.redis.zrevrange(REDIS_KEYS.lastSeen, 0, 0, 'WITHSCORES');
    return top.length === 2 ? Number(top[1]) : null;
  }

  /** nodeId -> last heard, for every node ever heard since Redis last started. */
  async allLastSeen(): Promise<Map<string, number>> {
    return this.heardSince(0);
  }

  async lastSeen(nodeId: string): Promise<number | null> {
    const score = await this.redis.zscore(REDIS_KEYS.lastSeen, nodeId);
    return score === null ? null : Number(score);
  }

  async livePayload(nodeId: string): Promise<Record<string, string> | null> {
    const h = await this.redis.hgetall(REDIS_KEYS.node(nodeId));
    return Object.keys(h).length ? h : null;
  }

  /** Last heard (ms) for each id, null where never heard; one round trip. */
  async lastSeenMany(nodeIds: string[]): Promise<Map<string, number | null>> {
    const result = new Map<string, number | null>();
    if (nodeIds.length === 0) return result;
    const scores = (await this.redis.call('ZMSCORE', REDIS_KEYS.lastSeen, ...nodeIds)) as Array<string | null>;
    nodeIds.forEach((id, i) => result.set(id, scores[i] === null ? null : Number(scores[i])));
    return result;
  }

  /** The stored live fields of each node (sentAt, receivedAt, payload), absent where none; one pipeline. */
  async liveMany(nodeIds: string[]): Promise<Map<string, { sentAt: number; receivedAt: number; payload: string }>> {
    const result = new Map<string, { sentAt: number; receivedAt: number; payload: string }>();
    if (nodeIds.length === 0) return result;
    const pipeline = this.redis.pipeline();
    for (const id of nodeIds) pipeline.hmget(REDIS_KEYS.node(id), 'sentAt', 'receivedAt', 'payload');
    const replies = (await pipeline.exec()) ?? [];
    replies.forEach(([err, v], i) => {
      if (err) throw err;
      const [sentAt, receivedAt, payload] = v as Array<string | null>;
      if (payload !== null) result.set(nodeIds[i], { sentAt: Number(sentAt), receivedAt: Number(receivedAt), payload });
    });
    return result;
  }
}
