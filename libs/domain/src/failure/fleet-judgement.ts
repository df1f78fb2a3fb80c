import { HealthThresholds } from '../nodes/node-health';
import { BucketState, EvictionPlan, EvictionPolicy, RackView, holdExpired, isPartitioned, nextHoldStarts, planEvictions } from './eviction-policy';
import { HealthTransition, ObservedNode, RecordedHealth, healthTransitions } from './health-transitions';
import { rackSilence } from './rack-silence';

/** What the failure detector observed this round. */
export interface FleetObservation {
  /** Every registered node with its rack. */
  nodes: ReadonlyArray<{ nodeId: string; rack: string }>;
  /** The nodes that hold live work: only their death ends anything. */
  withWork: ReadonlySet<string>;
  /** Each node's silence the control plane would have heard (silenceMs), ms. */
  silenceMs: (nodeId: string) => number;
  /** Whether a beat of the node was written since the detector's information began (a Redis restart). */
  heardSinceInfoBegan: (nodeId: string) => boolean;
}

/** What the detector carries from round to round. */
export interface DetectorState {
  /** Health as last recorded, per node (absent: never recorded, HEALTHY). */
  recorded: ReadonlyMap<string, RecordedHealth>;
  /** When each held node was first held for its rack's partition. */
  holdStarts: ReadonlyMap<string, number>;
  bucket: BucketState;
}

export interface FleetJudgement {
  racks: Map<string, RackView>;
  /** The hold starts to carry into the next round. */
  holdStarts: Map<string, number>;
  /** Which dead nodes with work to evict now, hold or defer (the bucket after it is in plan.bucket). */
  plan: EvictionPlan;
  /** Health changes to record as node events, one per node whose health or hold changed. */
  transitions: HealthTransition[];
}

/**
 * One round of the failure detector's decisions (ADR 0007), in order:
 * 1. each rack's silent share (rackSilence);
 * 2. holds: a dead node of a partitioned rack keeps when it was first held, and stays held while it
 *    is silent (a healing rack's stragglers are not evicted before they beat);
 * 3. evictions over the dead nodes that hold work, longest silence first, through the token bucket
 *    and the partition holds (planEvictions);
 * 4. every node's health against what was recorded: the changes to record (healthTransitions).
 */
export function judgeFleet(seen: FleetObservation, state: DetectorState, nowMs: number, policy: EvictionPolicy, t: HealthThresholds): FleetJudgement {
  const dead = (id: string) => seen.silenceMs(id) >= t.deadMs;
  const racks = rackSilence(seen.nodes, seen.silenceMs, t.suspectMs);
  const partitioned = (rack: string) => isPartitioned(racks.get(rack)!, policy);
  const holdStarts = nextHoldStarts(
    state.holdStarts,
    seen.nodes.filter((n) => dead(n.nodeId) && partitioned(n.rack)).map((n) => n.nodeId),
    dead,
    nowMs,
  );
  const candidates = seen.nodes
    .filter((n) => seen.withWork.has(n.nodeId) && dead(n.nodeId))
    .sort((a, b) => seen.silenceMs(b.nodeId) - seen.silenceMs(a.nodeId))
    .map((n) => ({ ...n, heldSinceMs: holdStarts.get(n.nodeId) ?? null }));
  const plan = planEvictions(candidates, racks, state.bucket, nowMs, policy);
  const observed: ObservedNode[] = seen.nodes.map((n) => {
    const since = holdStarts.get(n.nodeId) ?? null;
    return {
      nodeId: n.nodeId,
      silenceMs: seen.silenceMs(n.nodeId),
      heardSinceInfoBegan: seen.heardSinceInfoBegan(n.nodeId),
      held: since !== null && !holdExpired(since, nowMs, policy.holdMs),
      heldSinceMs: since,
    };
  });
  return { racks, holdStarts, plan, transitions: healthTransitions(state.recorded, observed, t) };
}

/**
 * What the jobs on a node are told when its hold changes: held for a partition, or back from one.
 * Null for every other change (an eviction is told by the job's own STATE_CHANGED).
 */
export function holdNote(change: HealthTransition): 'NODE_PARTITION_HELD' | 'NODE_RETURNED' | null {
  if (change.to.held) return 'NODE_PARTITION_HELD';
  if (change.from.held && change.to.health === 'HEALTHY') return 'NODE_RETURNED';
  return null;
}
