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
  constructor(
    private readonly redis: Redis,
    private readonly owner: string,
    private readonly ttlMs: number,
  ) {
    this.redis.defineCommand('gantryReleaseLease', { numberOfKeys: 1, lua: RELEASE_IF_OWNER });
  }

  private key(nodeId: string): string {
    return `gantry:lease:node:${nodeId}`;
  }

  /** Takes whichever of the leases are free, in one round trip; returns the nodes taken. */
  async acquireEach(nodeIds: string[]): Promise<Set<string>> {
    const ids = [...new Set(nodeIds)];
    if (ids.length === 0) return new Set();
    const pipe = this.redis.pipeline();
    for (const id of ids) pipe.set(this.key(id), this.owner, 'PX', this.ttlMs, 'NX');
    const results = (await pipe.exec()) ?? [];
    return new Set(ids.filter((_, i) => results[i]?.[1] === 'OK'));
  }

  /** Gives back leases this owner holds (never another's), in one round trip. */
  async release(nodeIds: string[]): Promise<void> {
    if (nodeIds.length === 0) return;
    const pipe = this.redis.pipeline() as unknown as Record<string, (...a: unknown[]) => unknown> & { exec(): Promise<unknown> };
    for (const id of new Set(nodeIds)) pipe.gantryReleaseLease(this.key(id), this.owner);
    await pipe.exec();
  }
}
