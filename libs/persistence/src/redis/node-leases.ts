import type Redis from 'ioredis';

const RELEASE_IF_OWNER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * Short per-node leases that keep scheduler replicas from planning onto the same nodes at once.
 * They only cut contention: the versioned compare-and-set in Postgres is the guarantee, so an
 * expired or lost lease costs a retried placement, never a double assignment.
 */
export class NodeLeases {
  constructor(private readonly redis: Redis, private readonly owner: string, private readonly ttlMs: number) {
    this.redis.defineCommand('gantryReleaseLease', { numberOfKeys: 1, lua: RELEASE_IF_OWNER });
  }

  private key(nodeId: string): string {
    return `gantry:lease:node:${nodeId}`;
  }

  /** All or nothing: takes every lease or none. */
  async acquire(nodeIds: string[]): Promise<boolean> {
    const taken: string[] = [];
    for (const id of [...nodeIds].sort()) {
      const ok = await this.redis.set(this.key(id), this.owner, 'PX', this.ttlMs, 'NX');
      if (ok !== 'OK') {
        await this.release(taken);
        return false;
      }
      taken.push(id);
    }
    return true;
  }

  async release(nodeIds: string[]): Promise<void> {
    for (const id of nodeIds) {
      await (this.redis as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>).gantryReleaseLease(this.key(id), this.owner);
    }
  }
}
