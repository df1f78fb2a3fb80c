import { HealthThresholds, NodeHealth } from '../nodes/node-health';

/**
 * Node health as the failure detector records it, one row per node, changed only on a transition.
 * `heldSinceMs` is when the node was first held for its rack's partition (null when not held);
 * it stays set after the hold expires while the node is still silent, so the expiry holds.
 */
export interface RecordedHealth {
  health: NodeHealth;
  held: boolean;
  heldSinceMs: number | null;
}

/** A node never recorded is taken as HEALTHY: a fleet that is fine writes nothing. */
export const UNRECORDED: RecordedHealth = { health: 'HEALTHY', held: false, heldSinceMs: null };

export type HealthChangeReason =
  /** A beat was written again. */
  | 'HEARD'
  /** Silent past the suspect threshold: no new placements. */
  | 'SILENT_PAST_SUSPECT'
  /** Silent past the dead threshold: its attempts end (through the token bucket). */
  | 'SILENT_PAST_DEAD'
  /** Silent past the dead threshold in a rack that went silent as a whole: held, not evicted. */
  | 'PARTITION_HELD'
  /** Held for the whole hold window and still silent: evicted at the token-bucket rate. */
  | 'PARTITION_HOLD_EXPIRED';

export interface ObservedNode {
  nodeId: string;
  /** Silence the control plane would have heard (watermark-based), ms. */
  silenceMs: number;
  /** Whether a beat of this node was written since the detector's information began (a Redis restart). */
  heardSinceInfoBegan: boolean;
  /** Dead in a partitioned rack, hold not expired. */
  held: boolean;
  /** Held start, carried over (see nextHoldStarts); null when not in a partitioned rack. */
  heldSinceMs: number | null;
}

export interface HealthTransition {
  nodeId: string;
  from: RecordedHealth;
  to: RecordedHealth;
  reason: HealthChangeReason;
}

function healthFromSilence(silenceMs: number, t: HealthThresholds): NodeHealth {
  if (silenceMs >= t.deadMs) return 'UNHEALTHY';
  if (silenceMs >= t.suspectMs) return 'DEGRADED';
  return 'HEALTHY';
}

const RANK: Record<NodeHealth, number> = { HEALTHY: 0, DEGRADED: 1, UNHEALTHY: 2 };

/**
 * What the detector observes now for one node, given what it recorded. Only a written beat can make
 * a node healthier: a node not heard since Redis' current life began has its silence counted from
 * then (short), which must not turn a node recorded UNHEALTHY back into HEALTHY.
 */
export function observedHealth(recorded: RecordedHealth, o: ObservedNode, t: HealthThresholds): RecordedHealth {
  let health = healthFromSilence(o.silenceMs, t);
  if (!o.heardSinceInfoBegan && RANK[recorded.health] > RANK[health]) health = recorded.health;
  const held = health === 'UNHEALTHY' && o.held;
  return { health, held, heldSinceMs: health === 'UNHEALTHY' ? o.heldSinceMs : null };
}

function reasonFor(from: RecordedHealth, to: RecordedHealth, holdExpiredNow: boolean): HealthChangeReason {
  if (to.health === 'HEALTHY') return 'HEARD';
  if (to.health === 'DEGRADED') return from.health === 'UNHEALTHY' ? 'HEARD' : 'SILENT_PAST_SUSPECT';
  if (to.held) return 'PARTITION_HELD';
  // A held node leaves the hold only by beating again or by its window running out.
  if (from.held && holdExpiredNow) return 'PARTITION_HOLD_EXPIRED';
  return 'SILENT_PAST_DEAD';
}

/**
 * The transitions to record this round: one per node whose health or hold changed, none for the
 * rest. A fleet of 50,000 nodes beating normally yields nothing, so events are written on changes
 * only, never per beat. A change of hold start alone (same health, same held) is carried silently.
 */
export function healthTransitions(recorded: ReadonlyMap<string, RecordedHealth>, observed: ObservedNode[], t: HealthThresholds): HealthTransition[] {
  const out: HealthTransition[] = [];
  for (const o of observed) {
    const from = recorded.get(o.nodeId) ?? UNRECORDED;
    const to = observedHealth(from, o, t);
    if (to.health === from.health && to.held === from.held) continue;
    const expiredNow = from.held && !to.held && to.health === 'UNHEALTHY' && o.heldSinceMs !== null;
    out.push({ nodeId: o.nodeId, from, to, reason: reasonFor(from, to, expiredNow) });
  }
  return out;
}
