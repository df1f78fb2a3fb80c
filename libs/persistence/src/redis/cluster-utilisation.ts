import type Redis from 'ioredis';
import { REDIS_KEYS } from './node-live-store';

export interface UtilisationTotals {
  nodes: number;
  gpus: number;
  gpuUtilMilli: number;
  cpuUtilMilli: number;
}

/**
 * Takes nodes that fell silent out of the running sums. Each sweep handles the nodes whose last-seen
 * score lies between the previous sweep's bound and this one's, so each death is handled once
 * whatever the fleet size, and replicas sweeping at once cannot subtract a node twice (the script
 * is atomic and clears the node's contribution fields as it subtracts them). A node that beats
 * again is counted afresh by the record-beat script.
 */
const SWEEP = `
local from = redis.call('GET', KEYS[3])
local lo = '-inf'
if from then lo = '(' .. from end
local upTo = tonumber(ARGV[1])
if from and tonumber(from) >= upTo then return 0 end
-- 0 - x, not -x: Lua formats -0 as "-0", which HINCRBY refuses.
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], lo, upTo)
local swept = 0
for _, id in ipairs(ids) do
  local key = ARGV[2] .. id
  local c = redis.call('HMGET', key, 'cg', 'cgu', 'ccu')
  if c[1] then
    redis.call('HINCRBY', KEYS[2], 'nodes', -1)
    redis.call('HINCRBY', KEYS[2], 'gpus', 0 - tonumber(c[1]))
    redis.call('HINCRBY', KEYS[2], 'gpuUtilMilli', 0 - tonumber(c[2]))
    redis.call('HINCRBY', KEYS[2], 'cpuUtilMilli', 0 - tonumber(c[3]))
    redis.call('HDEL', key, 'cg', 'cgu', 'ccu')
    swept = swept + 1
  end
end
redis.call('SET', KEYS[3], upTo)
return swept
`;

/** The cluster's running utilisation sums (written per beat by NodeLiveStore) and their sweep. */
export class ClusterUtilisationStore {
  constructor(private readonly redis: Redis) {
    this.redis.defineCommand('gantrySweepUtilisation', { numberOfKeys: 3, lua: SWEEP });
  }

  /** Removes the contributions of nodes last heard at or before `upToMs`; returns how many. */
  async sweepSilent(upToMs: number): Promise<number> {
    const sweep = (this.redis as unknown as Record<string, (...a: unknown[]) => Promise<number>>).gantrySweepUtilisation;
    return sweep.call(this.redis, REDIS_KEYS.lastSeen, REDIS_KEYS.utilisation, REDIS_KEYS.utilisationSweptUntil, upToMs, REDIS_KEYS.node(''));
  }

  async totals(): Promise<UtilisationTotals> {
    const h = await this.redis.hgetall(REDIS_KEYS.utilisation);
    const n = (k: string) => Number(h[k] ?? 0);
    return { nodes: n('nodes'), gpus: n('gpus'), gpuUtilMilli: n('gpuUtilMilli'), cpuUtilMilli: n('cpuUtilMilli') };
  }

  /** Nodes whose last-seen score lies in (above, atMost]: one O(log N) range count. */
  async countHeard(band: { above: number; atMost: number | null }): Promise<number> {
    return this.redis.zcount(REDIS_KEYS.lastSeen, `(${band.above}`, band.atMost === null ? '+inf' : band.atMost);
  }
}
