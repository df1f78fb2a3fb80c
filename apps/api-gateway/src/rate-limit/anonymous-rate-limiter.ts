import { BucketRate, BucketTake, TokenBucket, anonymousClientKey, takeFromBucket } from '@gantry/domain';

/** Most client addresses remembered; past it the least recently seen is forgotten (about 100 bytes each). */
const MAX_CLIENTS = 100_000;

/**
 * The budget of requests without a valid token (contract §5.3, ADR 0036): a token bucket per
 * client address (anonymousClientKey: an IPv4 address, an IPv6 /64) in this process's memory, so
 * that refusing a flood costs no Redis or database call. Per replica: behind N replicas a client
 * may make N times the rate. Memory is bounded: the least recently seen address is forgotten first
 * (forgetting one hands it a full bucket again, which an address still flooding empties at once).
 */
export class AnonymousRateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly rate: BucketRate,
    private readonly now: () => number = () => performance.now(),
    private readonly maxClients = MAX_CLIENTS,
  ) {}

  /** Spends one request of `address`'s budget, or says when there is one again. */
  take(address: string | null): BucketTake {
    const key = anonymousClientKey(address);
    const t = takeFromBucket(this.buckets.get(key) ?? null, this.now(), this.rate);
    // Re-inserted, so that the map's order is least recently seen first.
    this.buckets.delete(key);
    if (this.buckets.size >= this.maxClients) this.buckets.delete(this.buckets.keys().next().value!);
    this.buckets.set(key, t.bucket);
    return t;
  }

  get clients(): number {
    return this.buckets.size;
  }
}
