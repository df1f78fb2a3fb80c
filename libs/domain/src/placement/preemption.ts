import { NodeCapacity, ResourceRequest, couldEverFit } from '../resources/resources';
import { PlacementNode, schedulable } from './schedulable';

/** A queue's preemption policy (contract §4.7): whether its jobs may end lower bands' attempts. */
export type PreemptionPolicy = 'never' | 'lowerPriority';
export const PREEMPTION_POLICIES: readonly PreemptionPolicy[] = ['never', 'lowerPriority'];

/** A queued job of a `lowerPriority` queue that could not be placed this cycle. */
export interface Preemptor {
  id: string;
  /** Its queue's priority band. */
  band: number;
  /** Per node. */
  resources: ResourceRequest;
  /** Nodes it needs at once (a gang when > 1). */
  nodes: number;
}

/** A running attempt that might be preempted: every rank of it, with what each holds. */
export interface PreemptibleAttempt {
  jobId: string;
  attempt: number;
  /** Its queue's priority band. */
  band: number;
  /** Every node a rank of it holds (all of a gang's). */
  nodeIds: readonly string[];
  /** What each rank holds (per node). */
  perNode: { gpus: number; cpuCores: number; memoryMiB: number };
  /** When this job was last told to stop for a preemptor; null: never. */
  lastPreemptedAtMs: number | null;
  /** It is already stopping for some preemptor: its capacity is promised to that one. */
  preempting: boolean;
}

export interface PreemptionInput {
  preemptor: Preemptor;
  nodes: readonly PlacementNode[];
  running: readonly PreemptibleAttempt[];
  nowMs: number;
  /** No job is preempted twice within this many ms (GANTRY_PREEMPTION_COOLDOWN_MS). */
  cooldownMs: number;
  /**
   * Nodes promised to earlier preemptors whose victims are stopping (or have stopped, the preemptor
   * not placed yet): neither room for this one nor a place to find victims.
   */
  withheld?: ReadonlySet<string>;
  /** `nodes`, `running` and `withheld` made ready once for several preemptors (preemptionFleet); built here when absent. */
  fleet?: PreemptionFleet;
}

/** What a preemptor ends: whole attempts (every rank of a gang), and the nodes it will then fit on. */
export interface PreemptionChoice {
  victims: Array<{ jobId: string; attempt: number }>;
  /** The nodes the preemptor fits on once the victims stopped, `preemptor.nodes` of them. */
  nodeIds: string[];
  /** GPUs the victims hold in all (every rank of a gang victim counts). */
  gpus: number;
}

/** Whether `v` may be ended for a job of band `band` now: strictly lower band, not already stopping, out of its cooldown. */
export function preemptible(v: PreemptibleAttempt, band: number, nowMs: number, cooldownMs: number): boolean {
  return v.band < band && !v.preempting && (v.lastPreemptedAtMs === null || nowMs - v.lastPreemptedAtMs >= cooldownMs);
}

/** GPUs a victim gives back in all: a gang is preempted whole, so every rank's. */
function victimCost(v: PreemptibleAttempt): number {
  return v.perNode.gpus * v.nodeIds.length;
}

interface NodeChoice {
  nodeId: string;
  victims: PreemptibleAttempt[];
  cost: number;
}

/** What the node lacks for `req` now, per resource (0 where it has enough). */
function deficit(node: NodeCapacity, req: ResourceRequest): [number, number, number] {
  return [
    Math.max(0, req.gpus - (node.gpusTotal - node.gpusAllocated)),
    Math.max(0, req.cpuCores - (node.cpuCores - node.cpuAllocated)),
    Math.max(0, req.memoryMiB - (node.memoryMiB - node.memoryAllocated)),
  ];
}

/**
 * The cheapest set of `candidates` (fewest GPUs, then fewest victims) whose ranks on this node cover
 * `need`, by branch and bound over candidates sorted cheapest first; null when even all do not.
 * `bound`: a set must cost less than this to be worth finding.
 */
function cheapestCover(
  candidates: PreemptibleAttempt[],
  need: [number, number, number],
  bound: number,
): { victims: PreemptibleAttempt[]; cost: number } | null {
  const sorted = [...candidates].sort((a, b) => victimCost(a) - victimCost(b) || (a.jobId < b.jobId ? -1 : 1));
  // Suffix sums: what the candidates from i on could give at most, to cut branches that cannot cover.
  const rest: Array<[number, number, number]> = new Array(sorted.length + 1);
  rest[sorted.length] = [0, 0, 0];
  for (let i = sorted.length - 1; i >= 0; i--) {
    const p = sorted[i].perNode;
    rest[i] = [rest[i + 1][0] + p.gpus, rest[i + 1][1] + p.cpuCores, rest[i + 1][2] + p.memoryMiB];
  }
  let best: { victims: PreemptibleAttempt[]; cost: number } | null = null;
  let bestCost = bound;
  let bestCount = Infinity;
  const chosen: PreemptibleAttempt[] = [];
  const visit = (i: number, left: [number, number, number], cost: number): void => {
    if (left[0] <= 0 && left[1] <= 0 && left[2] <= 0) {
      if (cost < bestCost || (cost === bestCost && chosen.length < bestCount)) {
        best = { victims: [...chosen], cost };
        bestCost = cost;
        bestCount = chosen.length;
      }
      return;
    }
    if (i >= sorted.length || cost > bestCost) return;
    if (rest[i][0] < left[0] || rest[i][1] < left[1] || rest[i][2] < left[2]) return;
    const v = sorted[i];
    chosen.push(v);
    visit(i + 1, [left[0] - v.perNode.gpus, left[1] - v.perNode.cpuCores, left[2] - v.perNode.memoryMiB], cost + victimCost(v));
    chosen.pop();
    visit(i + 1, left, cost);
  };
  visit(0, need, 0);
  return best;
}

/**
 * What the victim search reads of the fleet, built once for all of a cycle's preemptors
 * (preemptionFleet) instead of once for each: building it per preemptor was most of a preempting
 * cycle on a large fleet (ADR 0026).
 */
export interface PreemptionFleet {
  /** The nodes a preemptor may use (schedulable, not withheld), most free GPUs first, then by id. */
  byFree: readonly PlacementNode[];
  /** Every running attempt by the nodes it holds; whether one may be ended is judged per preemptor. */
  onNode: ReadonlyMap<string, readonly PreemptibleAttempt[]>;
}

export function preemptionFleet(nodes: readonly PlacementNode[], running: readonly PreemptibleAttempt[], withheld?: ReadonlySet<string>): PreemptionFleet {
  const onNode = new Map<string, PreemptibleAttempt[]>();
  for (const v of running) {
    for (const id of v.nodeIds) {
      const list = onNode.get(id);
      if (list) list.push(v);
      else onNode.set(id, [v]);
    }
  }
  const free = (n: PlacementNode) => n.gpusTotal - n.gpusAllocated;
  const byFree = nodes.filter((n) => schedulable(n) && !withheld?.has(n.id)).sort((a, b) => free(b) - free(a) || (a.id < b.id ? -1 : 1));
  return { byFree, onNode };
}

function* chain<T>(a: Iterable<T>, b: Iterable<T>): Generator<T> {
  yield* a;
  yield* b;
}

type Candidate = { node: PlacementNode; need: [number, number, number] };

/**
 * The nodes that could ever hold `req`, by GPU deficit then id, each with what it lacks now: first
 * those with room for its GPUs (deficit 0; a contiguous run at the head of `byFree`, sorted by id
 * here), then the rest, lazily, since past that run `byFree` is already in deficit order (the deficit
 * is `req.gpus - free`). A search that stops early never looks at the rest of the fleet.
 */
function candidateNodes(fleet: PreemptionFleet, req: ResourceRequest): { withRoom: Candidate[]; rest: Iterable<Candidate> } {
  const nodes = fleet.byFree;
  let i = 0;
  const withRoom: Candidate[] = [];
  for (; i < nodes.length && nodes[i].gpusTotal - nodes[i].gpusAllocated >= req.gpus; i++) {
    if (couldEverFit(nodes[i], req)) withRoom.push({ node: nodes[i], need: deficit(nodes[i], req) });
  }
  withRoom.sort((a, b) => (a.node.id < b.node.id ? -1 : 1));
  const from = i;
  function* rest(): Generator<Candidate> {
    for (let k = from; k < nodes.length; k++) if (couldEverFit(nodes[k], req)) yield { node: nodes[k], need: deficit(nodes[k], req) };
  }
  return { withRoom, rest: rest() };
}

/**
 * Which running attempts a preemptor ends so that it fits: only attempts of strictly lower bands,
 * not already stopping for another preemptor, not preempted within the cooldown; the fewest GPUs
 * that make it fit on one node (a gang: on `nodes` nodes, the cheapest nodes chosen one by one, a
 * gang victim shared by two of them counted once), ties broken by fewer victims then node id
 * among the nodes searched.
 * Null when no such set exists, or when it already fits without any (nothing to preempt). `nodes`
 * must be as the cycle's own placements left them and `withheld` must name what earlier preemptors
 * were promised: a node free only in the snapshot, or free for someone else, once made every other
 * preemptor of the cycle look as if it fit, so preemptions stalled (ADR 0026, bench:dispatch).
 *
 * Nodes are visited by their GPU deficit, the least a cover of them can cost, so a fleet of full
 * nodes stops at the first nodes that can be freed at that cost instead of searching every node.
 */
export function choosePreemptionVictims(input: PreemptionInput): PreemptionChoice | null {
  const { preemptor, nowMs, cooldownMs } = input;
  const req = preemptor.resources;
  const fleet = input.fleet ?? preemptionFleet(input.nodes, input.running, input.withheld);
  const want = Math.max(1, preemptor.nodes);
  const { withRoom, rest } = candidateNodes(fleet, req);
  if (withRoom.filter((c) => c.need.every((x) => x === 0)).length >= want) return null;
  const victimsOn = (nodeId: string) => (fleet.onNode.get(nodeId) ?? []).filter((v) => preemptible(v, preemptor.band, nowMs, cooldownMs));

  // The `want` cheapest nodes, each with its cheapest cover; a node is searched only while it could still beat the worst kept.
  const kept: NodeChoice[] = [];
  // A cover costs at least the node's GPU deficit, so once that reaches the worst kept cost no later node is cheaper.
  const worst = (): number => (kept.length < want ? Infinity : kept[kept.length - 1].cost);
  for (const { node, need } of chain(withRoom, rest)) {
    if (kept.length === want && need[0] >= worst()) break;
    const free = need.every((x) => x === 0);
    const cover = free ? { victims: [], cost: 0 } : cheapestCover(victimsOn(node.id), need, worst());
    if (!cover) continue;
    kept.push({ nodeId: node.id, victims: cover.victims, cost: cover.cost });
    kept.sort((a, b) => a.cost - b.cost || a.victims.length - b.victims.length || (a.nodeId < b.nodeId ? -1 : 1));
    if (kept.length > want) kept.pop();
  }
  if (kept.length < want) return null;
  const victims = new Map<string, PreemptibleAttempt>();
  for (const k of kept) for (const v of k.victims) victims.set(`${v.jobId}/${v.attempt}`, v);
  if (victims.size === 0) return null;
  const list = [...victims.values()].sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : a.attempt - b.attempt));
  return {
    victims: list.map((v) => ({ jobId: v.jobId, attempt: v.attempt })),
    nodeIds: kept.map((k) => k.nodeId).sort(),
    gpus: list.reduce((n, v) => n + victimCost(v), 0),
  };
}
