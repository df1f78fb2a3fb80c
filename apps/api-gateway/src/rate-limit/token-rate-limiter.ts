import { BucketGrant } from '@gantry/persistence';

export interface RateLimits {
  /** Tokens added per second. */
  ratePerS: number;
  /** Bucket size: the most requests at once. */
  burst: number;
}

/** The verdict on one request, and what its answer's RateLimit-* headers say. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a request may succeed (when not allowed). */
  retryAfterS?: number;
  /** Whether the shared bucket could be asked (false: Redis did not answer and the request was let through). */
  checked: boolean;
}

/** The shared buckets (RateLimitBuckets in Redis); a fake in unit tests. */
export interface SharedBuckets {
  take(name: string, ratePerS: number, burst: number, want: number): Promise<BucketGrant>;
}

/** How long tokens taken from the shared bucket may be spent here before they are forfeited, ms. */
export const LEASE_MS = 1_000;
/** How much of a second's refill one lease asks for: 10 ms' worth (at 1,000/s, 10 tokens per Redis call). */
const LEASE_SHARE = 0.01;
/** After the shared bucket failed to answer, how long requests go unchecked before it is asked again, ms. */
const UNAVAILABLE_BACKOFF_MS = 1_000;
/** Keys idle this long lose their local state (the shared bucket keeps the truth), ms. */
const IDLE_FORGET_MS = 60_000;

interface LocalLease {
  /** Tokens taken from the shared bucket and not yet spent here. */
  tokens: number;
  /** Whole tokens the shared bucket had left when they were taken. */
  remaining: number;
  until: number;
  /** Refused until then without asking (the bucket said when the next token comes). */
  refusedUntil: number;
  retryAfterMs: number;
  waiters: Array<(d: RateDecision) => void>;
  refilling: boolean;
  limits: RateLimits;
}

/**
 * Per-token rate limiting against token buckets shared by every gateway replica (ADR 0016). A
 * replica takes tokens from the shared bucket a few at a time (a lease: 10 ms of refill, spent
 * here for up to LEASE_MS, then forfeited), so most requests cost a map lookup and one in about
 * ten a Redis call. Requests never exceed what the shared bucket granted, so the limit holds
 * across replicas; what is lost is at most one lease per replica per second of tokens forfeited,
 * and RateLimit-Remaining lags by what other replicas spent since this one's last lease. When
 * the bucket says no, this replica refuses that key without asking again until the bucket said a
 * token would be back. Concurrent requests of one key share one Redis call.
 * If Redis does not answer, requests are let through (and counted) for UNAVAILABLE_BACKOFF_MS at a
 * time: admission control still bounds the work a replica takes on.
 */
export class TokenRateLimiter {
  private readonly leases = new Map<string, LocalLease>();
  private unavailableUntil = 0;
  private lastSweep = 0;

  constructor(
    private readonly buckets: SharedBuckets,
    private readonly now: () => number = Date.now,
  ) {}

  /** Spends one token of `key`'s bucket, or says when to try again. Synchronous when the local lease decides. */
  take(key: string, limits: RateLimits): RateDecision | Promise<RateDecision> {
    const now = this.now();
    this.sweep(now);
    let lease = this.leases.get(key);
    if (!lease) {
      lease = { tokens: 0, remaining: limits.burst, until: 0, refusedUntil: 0, retryAfterMs: 0, waiters: [], refilling: false, limits };
      this.leases.set(key, lease);
    }
    lease.limits = limits;
    if (lease.waiters.length === 0) {
      const decided = this.decideLocally(lease, now);
      if (decided) return decided;
    }
    if (now < this.unavailableUntil) return { allowed: true, limit: limits.burst, remaining: lease.remaining, checked: false };
    return new Promise<RateDecision>((resolve) => {
      lease.waiters.push(resolve);
      if (!lease.refilling) {
        // Started on the next microtask, so that requests arriving in the same turn share the call.
        lease.refilling = true;
        queueMicrotask(() => void this.refill(key, lease));
      }
    });
  }

  private decideLocally(lease: LocalLease, now: number): RateDecision | null {
    if (lease.tokens > 0 && now < lease.until) {
      lease.tokens--;
      return { allowed: true, limit: lease.limits.burst, remaining: lease.remaining + lease.tokens, checked: true };
    }
    if (now < lease.refusedUntil) {
      return { allowed: false, limit: lease.limits.burst, remaining: 0, retryAfterS: Math.max(1, Math.ceil((lease.refusedUntil - now) / 1000)), checked: true };
    }
    return null;
  }

  /** Asks the shared bucket for enough tokens for every waiter (at least a lease's worth), then serves them in order. */
  private async refill(key: string, lease: LocalLease): Promise<void> {
    try {
      while (lease.waiters.length > 0) {
        const { ratePerS, burst } = lease.limits;
        const want = Math.min(burst, Math.max(lease.waiters.length, Math.ceil(ratePerS * LEASE_SHARE)));
        let grant: BucketGrant;
        try {
          grant = await this.buckets.take(key, ratePerS, burst, want);
        } catch {
          this.unavailableUntil = this.now() + UNAVAILABLE_BACKOFF_MS;
          for (const w of lease.waiters.splice(0)) w({ allowed: true, limit: burst, remaining: lease.remaining, checked: false });
          return;
        }
        const now = this.now();
        lease.tokens = grant.granted;
        lease.remaining = grant.remaining;
        lease.until = now + LEASE_MS;
        lease.refusedUntil = grant.granted === 0 ? now + grant.retryAfterMs : 0;
        // Served in arrival order; with nothing granted every waiter is refused. A partial grant
        // emptied the bucket, so the next round refuses whoever is left.
        while (lease.waiters.length > 0) {
          const decided = this.decideLocally(lease, now);
          if (!decided) break;
          lease.waiters.shift()!(decided);
        }
      }
    } finally {
      lease.refilling = false;
    }
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < IDLE_FORGET_MS) return;
    this.lastSweep = now;
    for (const [key, lease] of this.leases) {
      if (lease.waiters.length === 0 && !lease.refilling && now - Math.max(lease.until, lease.refusedUntil) > IDLE_FORGET_MS) this.leases.delete(key);
    }
  }
}
