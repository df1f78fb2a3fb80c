export const NODE_HEALTH = ['HEALTHY', 'DEGRADED', 'UNHEALTHY'] as const;
export type NodeHealth = (typeof NODE_HEALTH)[number];

export interface HealthThresholds {
  /** Silence (ms) after which a node gets no new placements. */
  suspectMs: number;
  /** Silence (ms) after which a node's attempts are failed. */
  deadMs: number;
}

/** Health from heartbeat silence; `lastSeenMs` null means never heard. */
export function nodeHealth(lastSeenMs: number | null, nowMs: number, t: HealthThresholds): NodeHealth {
  if (lastSeenMs === null) return 'UNHEALTHY';
  const silence = nowMs - lastSeenMs;
  if (silence >= t.deadMs) return 'UNHEALTHY';
  if (silence >= t.suspectMs) return 'DEGRADED';
  return 'HEALTHY';
}
