import { NodeCapacity, ResourceRequest, ShortResource, allocate, couldEverFit, fitsNow, shortResource } from '../resources/resources';
import { heldByPriority } from './priority-hold';
import { Reservation, chooseReservation } from './reservation';
import { PlacementNode, schedulable } from './schedulable';

export { PlacementNode, schedulable } from './schedulable';
export { Reservation, chooseReservation } from './reservation';
export { heldByPriority } from './priority-hold';

export interface PendingJob {
  id: string;
  resources: ResourceRequest;
  /** Gang size: all `nodes` nodes are acquired together or none. */
  nodes: number;
  /** Priority band of the job's queue (0 when absent): decides PRIORITY against reservations and earlier placements. */
  band?: number;
}

export type PendingReason = 'NO_MATCHING_NODES' | `INSUFFICIENT_CAPACITY:${ShortResource}` | 'GANG_WAITING' | 'PRIORITY';

export interface Placement {
  jobId: string;
  /** Ordered by gang rank. */
  nodeIds: string[];
}

export interface PlacementPlan {
  placements: Placement[];
  pending: Array<{ jobId: string; reason: PendingReason }>;
  /** Capacity held for the first job that could not go (anti-starvation), or null. */
  reservation: Reservation | null;
}

export interface PlanOptions {
  /** Hold nodes for the first blocked job (default true); see chooseReservation. */
  reserve?: boolean;
}

/** Best fit: the node left with the fewest free GPUs, then CPU cores, limits fragmentation. */
function leftover(node: NodeCapacity, req: ResourceRequest): [number, number, number] {
  return [
    node.gpusTotal - node.gpusAllocated - req.gpus,
    node.cpuCores - node.cpuAllocated - req.cpuCores,
    node.memoryMiB - node.memoryAllocated - req.memoryMiB,
  ];
}

function compareFit(a: PlacementNode, b: PlacementNode, req: ResourceRequest): number {
  const la = leftover(a, req);
  const lb = leftover(b, req);
  for (let i = 0; i < la.length; i++) if (la[i] !== lb[i]) return la[i] - lb[i];
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Chooses `count` nodes for one job, preferring a single rack for gangs; null when they don't exist. */
function chooseNodes(candidates: PlacementNode[], req: ResourceRequest, count: number): PlacementNode[] | null {
  if (candidates.length < count) return null;
  const sorted = [...candidates].sort((a, b) => compareFit(a, b, req));
  if (count === 1) return [sorted[0]];
  const byRack = new Map<string, PlacementNode[]>();
  for (const node of sorted) {
    const list = byRack.get(node.rack) ?? [];
    list.push(node);
    byRack.set(node.rack, list);
  }
  // The fullest rack that can hold the whole gang keeps emptier racks free for bigger gangs.
  const racks = [...byRack.values()].filter((list) => list.length >= count).sort((a, b) => a.length - b.length);
  return racks.length > 0 ? racks[0].slice(0, count) : sorted.slice(0, count);
}

/** The reason a job cannot be placed now, from the most to the least definitive. */
function whyPending(nodes: PlacementNode[], job: PendingJob): PendingReason {
  const everFit = nodes.filter((n) => couldEverFit(n, job.resources));
  if (everFit.length < job.nodes) return 'NO_MATCHING_NODES';
  const fitting = nodes.filter((n) => schedulable(n) && fitsNow(n, job.resources));
  if (fitting.length > 0 && job.nodes > 1) return 'GANG_WAITING';
  const shortages = everFit.map((n) => shortResource(n, job.resources)).filter((s): s is ShortResource => s !== null);
  return `INSUFFICIENT_CAPACITY:${shortages[0] ?? 'gpus'}`;
}

/**
 * Places jobs in the order given (the caller orders them by policy) onto a snapshot of nodes.
 * Pure: the snapshot is not mutated; capacity promised to earlier jobs in the plan is
 * subtracted before later ones are considered, so a plan never over-commits a node.
 *
 * The first job that waits for capacity (not one no node could ever hold) reserves the nodes it
 * is nearest to fitting, and no later job is placed on them: the head of the highest band with
 * blocked work cannot be starved by a stream of smaller jobs. A later job that would have fitted
 * the free capacity but lost it to a higher band (placed or reserving) waits with PRIORITY.
 */
export function planPlacements(jobs: PendingJob[], nodes: PlacementNode[], opts: PlanOptions = {}): PlacementPlan {
  const state = new Map(nodes.map((n) => [n.id, n]));
  const claimedBy = new Map<string, number>();
  const claim = (nodeIds: string[], band: number) => {
    for (const id of nodeIds) claimedBy.set(id, Math.max(claimedBy.get(id) ?? Number.NEGATIVE_INFINITY, band));
  };
  const plan: PlacementPlan = { placements: [], pending: [], reservation: null };
  const reserved = new Set<string>();
  for (const job of jobs) {
    const band = job.band ?? 0;
    const candidates = [...state.values()].filter((n) => schedulable(n) && !reserved.has(n.id) && fitsNow(n, job.resources));
    const chosen = chooseNodes(candidates, job.resources, job.nodes);
    if (chosen) {
      for (const node of chosen) state.set(node.id, allocate(node, job.resources));
      claim(chosen.map((n) => n.id), band);
      plan.placements.push({ jobId: job.id, nodeIds: chosen.map((n) => n.id) });
      continue;
    }
    const reason = whyPending([...state.values()], job);
    if (reason === 'NO_MATCHING_NODES') {
      plan.pending.push({ jobId: job.id, reason });
      continue;
    }
    const priority = heldByPriority({ ...job, band }, nodes, claimedBy);
    plan.pending.push({ jobId: job.id, reason: priority ? 'PRIORITY' : reason });
    if ((opts.reserve ?? true) && plan.reservation === null) {
      const nodeIds = chooseReservation(job, [...state.values()]);
      if (nodeIds) {
        plan.reservation = { jobId: job.id, band, nodeIds };
        for (const id of nodeIds) reserved.add(id);
        claim(nodeIds, band);
      }
    }
  }
  return plan;
}
