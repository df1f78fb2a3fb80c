import { ResourceRequest, ShortResource, allocate, couldEverFit, fitsNow, shortResource } from '../resources/resources';
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

/**
 * Best fit: the node left with the fewest free GPUs, then CPU cores, then memory, limits
 * fragmentation; node id breaks ties. Allocation-free: it runs for every node and job of a cycle.
 */
function compareFit(a: PlacementNode, b: PlacementNode): number {
  const gpus = a.gpusTotal - a.gpusAllocated - (b.gpusTotal - b.gpusAllocated);
  if (gpus !== 0) return gpus;
  const cpu = a.cpuCores - a.cpuAllocated - (b.cpuCores - b.cpuAllocated);
  if (cpu !== 0) return cpu;
  const mem = a.memoryMiB - a.memoryAllocated - (b.memoryMiB - b.memoryAllocated);
  if (mem !== 0) return mem;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The best-fitting node for a one-node job in one pass (no copy, no sort: fleets are 50,000 nodes). */
function bestFit(nodes: Iterable<PlacementNode>, req: ResourceRequest, reserved: ReadonlySet<string>): PlacementNode | null {
  let best: PlacementNode | null = null;
  for (const n of nodes) {
    if (!schedulable(n) || reserved.has(n.id) || !fitsNow(n, req)) continue;
    if (best === null || compareFit(n, best) < 0) best = n;
  }
  return best;
}

/**
 * Chooses `count` nodes for a gang, preferring a single rack: the fullest rack that can hold the
 * whole gang keeps emptier racks free for bigger gangs (ties: the rack with the best-fitting node).
 * Null when there are not enough candidates.
 */
function chooseNodes(candidates: PlacementNode[], count: number): PlacementNode[] | null {
  if (candidates.length < count) return null;
  const byRack = new Map<string, { nodes: PlacementNode[]; best: PlacementNode }>();
  for (const node of candidates) {
    const r = byRack.get(node.rack);
    if (!r) byRack.set(node.rack, { nodes: [node], best: node });
    else {
      r.nodes.push(node);
      if (compareFit(node, r.best) < 0) r.best = node;
    }
  }
  let rack: { nodes: PlacementNode[]; best: PlacementNode } | null = null;
  for (const r of byRack.values()) {
    if (r.nodes.length < count) continue;
    if (!rack || r.nodes.length < rack.nodes.length || (r.nodes.length === rack.nodes.length && compareFit(r.best, rack.best) < 0)) rack = r;
  }
  return bestK(rack ? rack.nodes : candidates, count);
}

/** The `k` best-fitting nodes in order, without sorting them all (k is a gang's size, nodes a fleet). */
function bestK(nodes: PlacementNode[], k: number): PlacementNode[] {
  const best: PlacementNode[] = [];
  for (const n of nodes) {
    if (best.length === k && compareFit(n, best[k - 1]) >= 0) continue;
    let i = best.length;
    while (i > 0 && compareFit(n, best[i - 1]) < 0) i--;
    best.splice(i, 0, n);
    if (best.length > k) best.pop();
  }
  return best;
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
    let chosen: PlacementNode[] | null;
    if (job.nodes === 1) {
      const best = bestFit(state.values(), job.resources, reserved);
      chosen = best ? [best] : null;
    } else {
      chosen = chooseNodes([...state.values()].filter((n) => schedulable(n) && !reserved.has(n.id) && fitsNow(n, job.resources)), job.nodes);
    }
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
