/**
 * How long the scheduler waits after a cycle that placed nothing because its placements lost (0: the
 * next cycle runs at once). The two ways to lose call for different answers:
 * - a node's lease was held by another replica: that replica is committing onto the node now, and
 *   retrying at once would collide with it again; wait a short, jittered while;
 * - its compare-and-set failed: a node or the job changed between the cycle's read and its
 *   commit, or was being written then (a release holding the node's row, a cordon, a cancel). The
 *   next cycle reads the change and plans from it, so waiting only delays the job (ADR 0030,
 *   bench:churn's idle phase). It runs at once, unless cycles in a row keep losing this way
 *   and placing nothing: past IMMEDIATE_RETRIES_AFTER_CHANGES of them it waits like a lease loss,
 *   so a node that changes under every read cannot spin the scheduler.
 */
export interface LostRaceInput {
  /** Placements the cycle committed. */
  placed: number;
  /** Placements left out because another replica held a node's lease. */
  lostLeases: number;
  /** Placements whose compare-and-set failed (a node or the job changed since the cycle read it). */
  lostChanges: number;
  /** Cycles in a row, this one included, that placed nothing and lost only to changes. */
  changeStreak: number;
  /** A number in [0, 1): the jitter. */
  random: number;
}

/** Cycles in a row that may lose only to changes and retry at once. */
export const IMMEDIATE_RETRIES_AFTER_CHANGES = 3;
const BACKOFF_MIN_MS = 20;
const BACKOFF_JITTER_MS = 80;

export function lostRaceBackoffMs(c: LostRaceInput): number {
  if (c.placed > 0 || c.lostLeases + c.lostChanges === 0) return 0;
  if (c.lostLeases === 0 && c.changeStreak <= IMMEDIATE_RETRIES_AFTER_CHANGES) return 0;
  return BACKOFF_MIN_MS + Math.floor(c.random * BACKOFF_JITTER_MS);
}
