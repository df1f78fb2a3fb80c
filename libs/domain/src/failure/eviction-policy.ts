/**
 * Which silent nodes to declare dead now. Kubernetes' node lifecycle controller is the model:
 * evictions are rate-limited by a token bucket, and when a large share of a failure domain goes
 * silent together it is treated as a partition (the control plane's view, or the rack's uplink,
 * is broken), not as a mass death: those nodes are held, not evicted, so work that is still running
 * behind the partition keeps running and is not started twice.
 */
export interface EvictionPolicy {
  /** A rack with at least this many nodes can be judged partitioned. */
  minRackSize: number;
  /** Share of a rack silent at once that means "partition" (0..1). */
  partitionShare: number;
  /** Token bucket: evictions per second, and the burst. */
  evictionsPerSecond: number;
  burst: number;
}

export const DEFAULT_EVICTION_POLICY: EvictionPolicy = { minRackSize: 4, partitionShare: 0.5, evictionsPerSecond: 5, burst: 20 };

export interface RackView {
  rack: string;
  /** Every node of the rack the control plane knows. */
  total: number;
  /** How many of them are silent past the dead timeout. */
  silent: number;
}

export interface BucketState {
  tokens: number;
  /** ms */
  updatedAt: number;
}

export interface EvictionPlan {
  evict: string[];
  /** Silent, but their rack looks partitioned: not evicted, not placed on. */
  heldForPartition: string[];
  /** Silent, evictable, but over the rate limit this round. */
  deferred: string[];
  bucket: BucketState;
}

export function refill(bucket: BucketState, nowMs: number, p: EvictionPolicy): BucketState {
  const elapsed = Math.max(0, nowMs - bucket.updatedAt) / 1000;
  return { tokens: Math.min(p.burst, bucket.tokens + elapsed * p.evictionsPerSecond), updatedAt: nowMs };
}

export function isPartitioned(rack: RackView, p: EvictionPolicy): boolean {
  return rack.total >= p.minRackSize && rack.silent / rack.total >= p.partitionShare;
}

/**
 * Plans one round. `candidates` are silent-past-dead nodes that hold live work, oldest silence
 * first (so the longest-dead are evicted first when the bucket is short).
 */
export function planEvictions(
  candidates: Array<{ nodeId: string; rack: string }>, racks: Map<string, RackView>, bucket: BucketState, nowMs: number, p: EvictionPolicy,
): EvictionPlan {
  let b = refill(bucket, nowMs, p);
  const plan: EvictionPlan = { evict: [], heldForPartition: [], deferred: [], bucket: b };
  for (const c of candidates) {
    const rack = racks.get(c.rack);
    if (rack && isPartitioned(rack, p)) {
      plan.heldForPartition.push(c.nodeId);
    } else if (b.tokens >= 1) {
      b = { ...b, tokens: b.tokens - 1 };
      plan.evict.push(c.nodeId);
    } else {
      plan.deferred.push(c.nodeId);
    }
  }
  plan.bucket = b;
  return plan;
}
