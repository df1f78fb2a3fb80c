import { NodeCapacity, ResourceRequest, couldEverFit } from '../resources/resources';
import { PlacementNode, schedulable } from './schedulable';

/**
 * Anti-starvation (ADR 0008): capacity held back for one blocked job, so smaller jobs behind it
 * cannot keep backfilling the nodes it waits for. Nothing else is placed on reserved nodes this cycle.
 */
export interface Reservation {
  jobId: string;
  /** The band of the job holding it: lower bands it keeps out are told PRIORITY. */
  band: number;
  nodeIds: string[];
  /**
   * With runtime backfill only: when the head is estimated to fit its reserved nodes (backfill-window.ts);
   * null when some work there has no maxRuntimeSeconds (or is not known), and then nothing backfills.
   */
  estimatedStartMs?: number | null;
}

/** How far a node is from fitting `req` now: GPUs, then CPU cores, then memory missing. */
function missing(node: NodeCapacity, req: ResourceRequest): [number, number, number] {
  return [
    Math.max(0, req.gpus - (node.gpusTotal - node.gpusAllocated)),
    Math.max(0, req.cpuCores - (node.cpuCores - node.cpuAllocated)),
    Math.max(0, req.memoryMiB - (node.memoryMiB - node.memoryAllocated)),
  ];
}

/**
 * The nodes a blocked job should wait for: schedulable nodes it could fit when empty, those
 * nearest to fitting first (then by id), as many as its gang needs. Nothing new goes onto them, so
 * what runs there only drains and the job starts when the last of it ends. Null when the fleet
 * could never hold the job (that is NO_MATCHING_NODES, and reserving would only waste capacity).
 *
 * With runtime backfill, `readyAtMs` (when the job would fit each node, from its ranks' limits)
 * comes first: the nodes ready earliest. Backfilled work on them ends by the estimated start, so the
 * next cycle finds these nodes ready by then again and its estimate is no later; chosen by what is
 * free now, the reservation moved to other nodes as backfill filled these, its estimate with it,
 * and a big head could wait indefinitely (bench:fairness).
 */
export function chooseReservation(
  job: { resources: ResourceRequest; nodes: number },
  nodes: ReadonlyArray<NodeCapacity & Pick<PlacementNode, 'id' | 'health' | 'cordoned'>>,
  readyAtMs?: (node: NodeCapacity & Pick<PlacementNode, 'id'>) => number,
): string[] | null {
  const eligible = nodes.filter((n) => schedulable(n) && couldEverFit(n, job.resources));
  if (eligible.length < job.nodes) return null;
  const key = new Map(eligible.map((n) => [n.id, readyAtMs ? [readyAtMs(n), ...missing(n, job.resources)] : missing(n, job.resources)]));
  eligible.sort((a, b) => {
    const ka = key.get(a.id)!;
    const kb = key.get(b.id)!;
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] - kb[i];
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
  return eligible.slice(0, job.nodes).map((n) => n.id);
}
