import { ResourceRequest, ShortResource, allocate, couldEverFit, fitsNow, shortResource } from '../resources/resources';
import { BackfillInput, RankEnd, estimatedStartMs, fitsBackfillWindow, rankEndMs, readyAtMs } from './backfill-window';
import { compareFit, insertByFit } from './best-fit';
import { FitIndex } from './fit-index';
import { chooseGpuIndices, holdGpuIndices } from './gpu-devices';
import { GangCandidates } from './gang-candidates';
import { heldByPriority } from './priority-hold';
import { Reservation, chooseReservation } from './reservation';
import { PlacementNode, schedulable } from './schedulable';

export { PlacementNode, schedulable } from './schedulable';
export { Reservation, chooseReservation } from './reservation';
export {
  BACKFILL_MODES,
  BackfillInput,
  BackfillMode,
  NodeRunsLookup,
  RankEnd,
  RankRun,
  backfillWindowSeconds,
  estimatedStartMs,
  fitsBackfillWindow,
  nodeReadyAtMs,
  rankEndMs,
} from './backfill-window';
export { heldByPriority } from './priority-hold';
export { FitIndex } from './fit-index';
export { GangCandidates } from './gang-candidates';
export { NodeDevices, chooseGpuIndices, holdGpuIndices, usableGpuIndices } from './gpu-devices';
export { MASTER_PORT_BASE, gangMasterPort, rankGpuIndices } from './gang-rendezvous';

export interface PendingJob {
  id: string;
  resources: ResourceRequest;
  /** Gang size: all `nodes` nodes are acquired together or none. */
  nodes: number;
  /** Priority band of the job's queue (0 when absent): decides PRIORITY against reservations and earlier placements. */
  band?: number;
  /**
   * Nodes where an attempt of the job failed to start (START_TIMEOUT, ADR 0035): the job goes on
   * the best nodes without them if there are enough, else where it fits as usual. A preference,
   * never a reason to wait.
   */
  avoidNodeIds?: readonly string[];
  /** How long an attempt may run (the agent stops it then); with runtime backfill, what decides whether it may use reserved nodes. */
  maxRuntimeSeconds?: number | null;
}

/**
 * BACKFILL_WINDOW (runtime backfill only): it would fit on the reserved nodes now, but its
 * maxRuntimeSeconds is absent or ends after the reservation's estimated start.
 */
export type PendingReason = 'NO_MATCHING_NODES' | `INSUFFICIENT_CAPACITY:${ShortResource}` | 'GANG_WAITING' | 'PRIORITY' | 'BACKFILL_WINDOW';

export interface Placement {
  jobId: string;
  /** Ordered by gang rank. */
  nodeIds: string[];
  /** The GPU device indices each rank holds on its node (rank i on nodeIds[i]); [] per rank for a job without GPUs. */
  gpuIndices: number[][];
}

export interface PlacementPlan {
  placements: Placement[];
  pending: Array<{ jobId: string; reason: PendingReason }>;
  /** Capacity held for the first job that could not go (anti-starvation), or null. */
  reservation: Reservation | null;
  /** The nodes this plan placed onto, as they are with its placements: what a later step of the cycle sees instead of the snapshot's. */
  after: ReadonlyMap<string, PlacementNode>;
}

export interface PlanOptions {
  /** Hold nodes for the first blocked job (default true); see chooseReservation. */
  reserve?: boolean;
  /**
   * An index of exactly `nodes`, kept by the caller between plans (building one sorts the fleet:
   * most of a small cycle at 50,000 nodes). The plan's allocations are applied to it while it
   * plans and taken back before it returns, so the caller's index is as it was given.
   */
  index?: FitIndex;
  /** Gang candidates on `index`, kept by the caller with it; given back as they were too. */
  gangs?: GangCandidates;
  /**
   * Nodes no job may be placed on in this plan, as if reserved: where preempted attempts are still
   * stopping, so that what they give back goes to their preemptor, not to whoever asks first (ADR 0026).
   */
  withheld?: ReadonlySet<string>;
  /**
   * Runtime-aware backfill (ADR 0008): the reservation gets an estimated start from the ranks on its
   * nodes, and a later job whose maxRuntimeSeconds ends by then may be placed on them. Absent: strict,
   * no later job is placed on reserved nodes.
   */
  backfill?: BackfillInput;
}

/**
 * Chooses `count` nodes for a gang, preferring a single rack: the fullest rack that can hold the
 * whole gang keeps emptier racks free for bigger gangs (ties: the rack with the best-fitting node).
 * Each rack's candidates come in best-fit order (GangCandidates), so a rack costs a look at its
 * first node, not a pass over it. Null when there are not enough candidates.
 */
function chooseNodes(racks: ReadonlyMap<string, PlacementNode[]>, count: number): PlacementNode[] | null {
  let chosen: PlacementNode[] | null = null;
  let total = 0;
  for (const nodes of racks.values()) {
    total += nodes.length;
    if (nodes.length < count || (chosen && nodes.length > chosen.length)) continue;
    if (!chosen || nodes.length < chosen.length || compareFit(nodes[0], chosen[0]) < 0) chosen = nodes;
  }
  if (chosen) return chosen.slice(0, count);
  if (total < count) return null;
  return bestK([...racks.values()].flat(), count);
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

/**
 * The nodes for one job: the best fit as usual, but without the nodes the job avoids while enough
 * others fit. Only a job that avoids some node pays for the second look.
 */
function chooseFor(job: PendingJob, index: FitIndex, gangs: GangCandidates, reserved: ReadonlySet<string>): PlacementNode[] | null {
  const avoided = job.avoidNodeIds ?? [];
  if (avoided.length > 0) {
    const avoid = new Set(avoided);
    if (job.nodes === 1) {
      const best = index.best(job.resources, new Set([...reserved, ...avoided]));
      if (best) return [best];
    } else {
      const racks = new Map<string, PlacementNode[]>();
      for (const [rack, nodes] of gangs.racks(job.resources, reserved)) {
        const kept = nodes.filter((n) => !avoid.has(n.id));
        if (kept.length > 0) racks.set(rack, kept);
      }
      const elsewhere = chooseNodes(racks, job.nodes);
      if (elsewhere) return elsewhere;
    }
  }
  if (job.nodes === 1) {
    const best = index.best(job.resources, reserved);
    return best ? [best] : null;
  }
  return chooseNodes(gangs.racks(job.resources, reserved), job.nodes);
}

/**
 * The nodes for a job that fits the backfill window, when nothing outside the reservation fits it:
 * the best fit with the reserved nodes open too (never the withheld ones). The reserved nodes are few
 * (one gang's worth), so a gang's racks are the usual candidates with those of them that fit added.
 */
function chooseOnReserved(
  job: PendingJob,
  index: FitIndex,
  gangs: GangCandidates,
  reserved: ReadonlySet<string>,
  withheld: ReadonlySet<string>,
  reservedNodes: readonly PlacementNode[],
): PlacementNode[] | null {
  if (job.nodes === 1) {
    const best = index.best(job.resources, withheld);
    return best ? [best] : null;
  }
  const open = reservedNodes.filter((n) => !withheld.has(n.id) && schedulable(n) && fitsNow(n, job.resources));
  const candidates = gangs.racks(job.resources, reserved);
  if (open.length === 0) return chooseNodes(candidates, job.nodes);
  // Only the racks of the reserved nodes are copied (the candidates' lists are not to be mutated).
  const racks = new Map(candidates);
  for (const n of open) {
    const rack = racks.get(n.rack);
    const copy = rack && rack !== candidates.get(n.rack) ? rack : [...(rack ?? [])];
    insertByFit(copy, n);
    racks.set(n.rack, copy);
  }
  return chooseNodes(racks, job.nodes);
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
  const index = opts.index ?? new FitIndex(nodes);
  const gangs = opts.gangs ?? new GangCandidates(index);
  const applied: Array<[PlacementNode, PlacementNode]> = [];
  /** Nodes the plan allocated on or reserved, as they were given. */
  const touched = new Map<string, PlacementNode>();
  try {
    return planOnto(jobs, nodes, opts, index, gangs, applied, touched);
  } finally {
    // The caller's index and gang candidates: what this plan allocated or reserved is taken back.
    if (opts.index) for (let i = applied.length - 1; i >= 0; i--) index.replace(applied[i][1], applied[i][0]);
    if (opts.gangs) for (const original of touched.values()) gangs.changed(original, NOTHING_RESERVED);
  }
}

const NOTHING_RESERVED: ReadonlySet<string> = new Set();

/** The ranks on a node as the estimate sees them: those read with the snapshot plus this plan's; undefined when the snapshot's are not known. */
function ranksOn(backfill: BackfillInput, planned: ReadonlyMap<string, RankEnd[]>, nodeId: string): RankEnd[] | undefined {
  const read = backfill.runs.get(nodeId);
  if (read === undefined) return undefined;
  const ends = read.map((r) => ({ gpus: r.gpus, cpuCores: r.cpuCores, memoryMiB: r.memoryMiB, endsAtMs: rankEndMs(r, backfill.nowMs) }));
  return [...ends, ...(planned.get(nodeId) ?? [])];
}

/** planPlacements' body; every allocation it makes in the index is noted in `applied`, every node it changes in `touched`. */
function planOnto(
  jobs: PendingJob[],
  nodes: PlacementNode[],
  opts: PlanOptions,
  index: FitIndex,
  gangs: GangCandidates,
  applied: Array<[PlacementNode, PlacementNode]>,
  touched: Map<string, PlacementNode>,
): PlacementPlan {
  // Only the nodes this plan has allocated on; the rest are as given (no 50,000-entry copy per cycle).
  const changed = new Map<string, PlacementNode>();
  const current = () => nodes.map((n) => changed.get(n.id) ?? n);
  const claimedBy = new Map<string, number>();
  const claim = (nodeIds: string[], band: number) => {
    for (const id of nodeIds) claimedBy.set(id, Math.max(claimedBy.get(id) ?? Number.NEGATIVE_INFINITY, band));
  };
  const plan: PlacementPlan = { placements: [], pending: [], reservation: null, after: changed };
  const reserved = new Set<string>();
  const withheld = opts.withheld ?? NOTHING_RESERVED;
  const backfill = opts.backfill;
  /** Runtime backfill: the reservation's nodes (as the plan has them) and its estimated start; Infinity: unknown. */
  let window: { nodeIds: string[]; startMs: number } | null = null;
  /** Runtime backfill: the ranks this plan placed, per node, for the estimate of a reservation made after them. */
  const plannedRanks = new Map<string, RankEnd[]>();
  if (opts.withheld && opts.withheld.size > 0) {
    for (const n of nodes) {
      if (!opts.withheld.has(n.id)) continue;
      reserved.add(n.id);
      touched.set(n.id, n);
      gangs.changed(n, reserved);
    }
  }
  /** The reserved nodes as they were when reserved (their state later in the plan is changed.get(id) ?? this). */
  const reservedAsGiven = new Map<string, PlacementNode>();
  // A job that cannot go leaves a note for later jobs of the same shape and band: until a placement
  // or a reservation changes the plan's state, they cannot go either, for the same reason. With a
  // full cluster and a deep queue this skips a few passes over the fleet per waiting job.
  let generation = 0;
  const cannotGo = new Map<string, { generation: number; reason: PendingReason }>();
  for (const job of jobs) {
    const band = job.band ?? 0;
    // Whether this job may use the reserved nodes: part of its shape, since two jobs alike but for it fare differently.
    const mayBackfill = window !== null && fitsBackfillWindow(job.maxRuntimeSeconds, backfill!.nowMs, window.startMs);
    const shape = `${job.nodes}|${band}|${job.resources.gpus}|${job.resources.gpuModel}|${job.resources.cpuCores}|${job.resources.memoryMiB}|${mayBackfill}`;
    const known = cannotGo.get(shape);
    if (known && known.generation === generation) {
      plan.pending.push({ jobId: job.id, reason: known.reason });
      continue;
    }
    const onReserved = () =>
      chooseOnReserved(
        job,
        index,
        gangs,
        reserved,
        withheld,
        window!.nodeIds.map((id) => changed.get(id) ?? reservedAsGiven.get(id)!),
      );
    const chosen = chooseFor(job, index, gangs, reserved) ?? (mayBackfill ? onReserved() : null);
    // Which devices each chosen node hands out. The counts already fit, so a node short of free
    // devices means its snapshot disagrees with itself: the job waits rather than share a device.
    const devices = chosen ? chosen.map((n) => chooseGpuIndices(n, job.resources.gpus)) : null;
    if (devices && devices.some((d) => d === null)) {
      plan.pending.push({ jobId: job.id, reason: 'INSUFFICIENT_CAPACITY:gpus' });
      continue;
    }
    if (chosen) {
      for (let k = 0; k < chosen.length; k++) {
        const node = chosen[k];
        const held = devices![k]!;
        const after = held.length > 0 ? { ...allocate(node, job.resources), gpusHeld: holdGpuIndices(node, held) } : allocate(node, job.resources);
        if (!touched.has(node.id)) touched.set(node.id, node);
        changed.set(node.id, after);
        index.replace(node, after);
        applied.push([node, after]);
        gangs.changed(after, reserved);
      }
      if (backfill) {
        const end: RankEnd = {
          gpus: job.resources.gpus,
          cpuCores: job.resources.cpuCores,
          memoryMiB: job.resources.memoryMiB,
          endsAtMs: rankEndMs({ startedAtMs: null, maxRuntimeSeconds: job.maxRuntimeSeconds ?? null }, backfill.nowMs),
        };
        for (const n of chosen) plannedRanks.set(n.id, [...(plannedRanks.get(n.id) ?? []), end]);
      }
      claim(
        chosen.map((n) => n.id),
        band,
      );
      plan.placements.push({ jobId: job.id, nodeIds: chosen.map((n) => n.id), gpuIndices: devices as number[][] });
      generation++;
      continue;
    }
    const now = current();
    const reason = whyPending(now, job);
    if (reason === 'NO_MATCHING_NODES') {
      plan.pending.push({ jobId: job.id, reason });
      cannotGo.set(shape, { generation, reason });
      continue;
    }
    // Kept off reserved nodes it would fit only by its maxRuntimeSeconds (absent, or past a known estimated start): the window is the reason.
    const outsideWindow = window !== null && Number.isFinite(window.startMs) && !mayBackfill && onReserved() !== null;
    const final: PendingReason = outsideWindow ? 'BACKFILL_WINDOW' : heldByPriority({ ...job, band }, nodes, claimedBy) ? 'PRIORITY' : reason;
    plan.pending.push({ jobId: job.id, reason: final });
    if ((opts.reserve ?? true) && plan.reservation === null) {
      const nodeIds = chooseReservation(job, now, backfill && ((n) => readyAtMs(n, ranksOn(backfill, plannedRanks, n.id), job.resources, backfill.nowMs)));
      if (nodeIds) {
        plan.reservation = { jobId: job.id, band, nodeIds };
        for (const id of nodeIds) reserved.add(id);
        const byId = new Map(now.map((n) => [n.id, n]));
        for (const id of nodeIds) {
          const n = byId.get(id)!;
          if (!touched.has(id)) touched.set(id, n);
          gangs.changed(n, reserved);
        }
        if (backfill) {
          for (const id of nodeIds) reservedAsGiven.set(id, byId.get(id)!);
          const startMs = estimatedStartMs(
            job.resources,
            nodeIds.map((id) => byId.get(id)!),
            (id) => ranksOn(backfill, plannedRanks, id),
            backfill.nowMs,
          );
          window = { nodeIds, startMs };
          plan.reservation.estimatedStartMs = Number.isFinite(startMs) ? startMs : null;
        }
        claim(nodeIds, band);
        generation++;
      }
    }
    // Still true after its own reservation: that holds nodes back and claims them at this job's band,
    // which leaves a same-band job's reason as it was.
    cannotGo.set(shape, { generation, reason: final });
  }
  return plan;
}
