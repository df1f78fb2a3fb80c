import type { Node, NodeEvent } from '@gantry/client';

/**
 * What the node page says about a drain (ADR 0027): one pending (the node's drainDeadline), or the
 * last one done (its latest DRAINED event, while the node is still cordoned: an uncordon puts it
 * back to work and the drain is history, in the timeline only).
 */
export type DrainStatus = { kind: 'draining'; deadline: string } | { kind: 'drained'; at: string; jobIds: string[] } | { kind: 'none' };

export function drainStatus(node: Pick<Node, 'cordoned' | 'drainDeadline'>, events: readonly NodeEvent[]): DrainStatus {
  if (node.drainDeadline) return { kind: 'draining', deadline: node.drainDeadline };
  if (!node.cordoned) return { kind: 'none' };
  // The latest drain or cordon change decides: a DRAINED followed by an uncordon and a plain cordon is not "drained".
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'DRAINED') return { kind: 'drained', at: e.at, jobIds: e.jobIds ?? [] };
    if (e.type === 'UNCORDONED') return { kind: 'none' };
  }
  return { kind: 'none' };
}
