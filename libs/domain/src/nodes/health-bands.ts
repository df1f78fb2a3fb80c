import { HealthThresholds } from './node-health';

/**
 * The last-seen ranges that make a node HEALTHY or DEGRADED at `nowMs`, as score bounds over the
 * last-seen index: counting nodes per health is then two range counts, not a scan of every node.
 * Bounds agree with nodeHealth: HEALTHY is lastSeen > now - suspect; DEGRADED is
 * now - dead < lastSeen <= now - suspect; everything else (and never heard) is UNHEALTHY.
 */
export interface HealthBand {
  /** Exclusive lower bound on lastSeen (ms). */
  above: number;
  /** Inclusive upper bound on lastSeen (ms); null = unbounded. */
  atMost: number | null;
}

export function healthBands(nowMs: number, t: HealthThresholds): { healthy: HealthBand; degraded: HealthBand } {
  return {
    healthy: { above: nowMs - t.suspectMs, atMost: null },
    degraded: { above: nowMs - t.deadMs, atMost: nowMs - t.suspectMs },
  };
}
