import { ResourceRequest, fitsNow } from '../resources/resources';
import { PlacementNode, schedulable } from './schedulable';

/**
 * Whether a job that cannot go now is held by priority rather than by capacity: it would have
 * fitted what was free when the cycle began (`atStart`), but a job of a higher band took or
 * reserved some of those nodes (`claimedBy`: the highest band that placed onto or reserved each
 * node this cycle). Then its reason is PRIORITY, not INSUFFICIENT_CAPACITY: more capacity would
 * not help it, a quieter higher band would.
 */
export function heldByPriority(
  job: { resources: ResourceRequest; nodes: number; band: number },
  atStart: PlacementNode[],
  claimedBy: ReadonlyMap<string, number>,
): boolean {
  const fitted = atStart.filter((n) => schedulable(n) && fitsNow(n, job.resources));
  if (fitted.length < job.nodes) return false;
  return fitted.some((n) => (claimedBy.get(n.id) ?? Number.NEGATIVE_INFINITY) > job.band);
}
