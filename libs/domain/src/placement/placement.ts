import { NodeHealth } from '../nodes/node-health';
import { NodeCapacity, ResourceRequest, ShortResource, allocate, couldEverFit, fitsNow, shortResource } from '../resources/resources';

export interface PlacementNode extends NodeCapacity {
  id: string;
  rack: string;
  health: NodeHealth;
  cordoned: boolean;
  /** Allocation version read with the snapshot; the commit compares and sets it. */
  version: number;
}

export interface PendingJob {
  id: string;
  resources: ResourceRequest;
  /** Gang size: all `nodes` nodes are acquired together or none. */
  nodes: number;
}

export type PendingReason = 'NO_MATCHING_NODES' | `INSUFFICIENT_CAPACITY:${ShortResource}` | 'GANG_WAITING';

export interface Placement {
  jobId: string;
  /** Ordered by gang rank. */
  nodeIds: string[];
}

export interface PlacementPlan {
  placements: Placement[];
  pending: Array<{ jobId: string; reason: PendingReason }>;
}

function schedulable(node: PlacementNode): boolean {
  return node.health === 'HEALTHY' && !node.cordoned;
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
 */
export function planPlacements(jobs: PendingJob[], nodes: PlacementNode[]): PlacementPlan {
  const state = new Map(nodes.map((n) => [n.id, n]));
  const plan: PlacementPlan = { placements: [], pending: [] };
  for (const job of jobs) {
    const candidates = [...state.values()].filter((n) => schedulable(n) && fitsNow(n, job.resources));
    const chosen = chooseNodes(candidates, job.resources, job.nodes);
    if (!chosen) {
      plan.pending.push({ jobId: job.id, reason: whyPending([...state.values()], job) });
      continue;
    }
    for (const node of chosen) state.set(node.id, allocate(node, job.resources));
    plan.placements.push({ jobId: job.id, nodeIds: chosen.map((n) => n.id) });
  }
  return plan;
}
