import { refillBucket } from '../admission/token-bucket';

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
  /**
   * How long a node of a partitioned rack is held before it is evicted like any other dead node
   * (through the token bucket), ms. 0 holds it until its rack returns.
   */
  holdMs: number;
}

export interface RackView {
  rack: string;
  /** Every node of the rack the control plane knows. */
  total: number;
  /**
   * How many of them are silent past the suspect timeout. Not the dead one: nodes that stop together
   * cross the dead timeout spread over a heartbeat period, and the first to cross must already see
   * the rack as partitioned.
   */
  silent: number;
}

export interface BucketState {
  tokens: number;
  /** ms */
  updatedAt: number;
}

export interface EvictionCandidate {
  nodeId: string;
  rack: string;
  /**
   * When the node was first held for its rack's partition (ms), from nextHoldStarts; a node with a
   * hold start stays held (until the window runs out) even if its rack no longer looks partitioned.
   * Absent: not held before (a partitioned rack's node starts its hold now).
   */
  heldSinceMs?: number | null;
}

export interface EvictionPlan {
  evict: string[];
  /** Silent, but their rack looks partitioned: not evicted, not placed on. */
  heldForPartition: string[];
  /** Silent, evictable, but over the rate limit this round. */
  deferred: string[];
  /** Nodes of a partitioned rack whose hold window has run out (each is also in evict or deferred). */
  holdExpired: string[];
  bucket: BucketState;
}

export function refill(bucket: BucketState, nowMs: number, p: EvictionPolicy): BucketState {
  return refillBucket(bucket, nowMs, { ratePerS: p.evictionsPerSecond, burst: p.burst });
}

export function isPartitioned(rack: RackView, p: Pick<EvictionPolicy, 'minRackSize' | 'partitionShare'>): boolean {
  return rack.total >= p.minRackSize && rack.silent / rack.total >= p.partitionShare;
}

/** Whether a node held since `heldSinceMs` has been held for the whole window (never, with holdMs 0). */
export function holdExpired(heldSinceMs: number, nowMs: number, holdMs: number): boolean {
  return holdMs > 0 && nowMs - heldSinceMs >= holdMs;
}

/**
 * The hold starts to carry into the next round. Every dead node of a partitioned rack keeps the
 * moment it was first held (or starts now). A node once held stays held while it is still dead,
 * even when its rack no longer looks partitioned: a partition heals over a heartbeat period, and
 * when half the rack is back the stragglers must not be evicted a moment before they beat. Only a
 * node heard again drops out, so a later partition gets a whole window of its own.
 */
export function nextHoldStarts(
  previous: ReadonlyMap<string, number>,
  deadInPartitionedRacks: Iterable<string>,
  isDead: (nodeId: string) => boolean,
  nowMs: number,
): Map<string, number> {
  const next = new Map<string, number>();
  for (const [id, since] of previous) if (isDead(id)) next.set(id, since);
  for (const id of deadInPartitionedRacks) if (!next.has(id)) next.set(id, nowMs);
  return next;
}

/**
 * Plans one round. `candidates` are silent-past-dead nodes that hold live work, oldest silence
 * first (so the longest-dead are evicted first when the bucket is short). A node of a partitioned
 * rack is held until its hold window runs out; then it queues for the token bucket like any other,
 * so a rack that really died drains at the eviction rate, never all at once.
 */
export function planEvictions(
  candidates: EvictionCandidate[],
  racks: Map<string, RackView>,
  bucket: BucketState,
  nowMs: number,
  p: EvictionPolicy,
): EvictionPlan {
  let b = refill(bucket, nowMs, p);
  const plan: EvictionPlan = { evict: [], heldForPartition: [], deferred: [], holdExpired: [], bucket: b };
  for (const c of candidates) {
    const rack = racks.get(c.rack);
    const heldBefore = c.heldSinceMs != null;
    const partitioned = heldBefore || (rack !== undefined && isPartitioned(rack, p));
    const expired = heldBefore && holdExpired(c.heldSinceMs!, nowMs, p.holdMs);
    if (expired) plan.holdExpired.push(c.nodeId);
    if (partitioned && !expired) {
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
