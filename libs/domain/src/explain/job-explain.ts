import { NodeHealth } from '../nodes/node-health';
import { BackfillMode, RankEnd, backfillWindowSeconds, estimatedStartMs, fitsBackfillWindow, readyAtMs } from '../placement/backfill-window';
import { ExplainFairShare, fairShareBlockerDetail } from './fair-share-blocker';
import { chooseReservation } from '../placement/reservation';
import { QueueLimits, cohortHeld, judgeQuota, queueLimits } from '../fairness/quota-tree';
import { NodeCapacity, ResourceRequest, allocate, couldEverFit, fitsNow } from '../resources/resources';

/*
 * Why a queued job is not running, what would let it start, and when it may (contract §4.7,
 * ADR 0024). A pure function over a snapshot the gateway reads; nothing here is the scheduler's
 * decision, and nothing the scheduler decides depends on it.
 */

export interface Amounts {
  gpus: number;
  cpuCores: number;
  memoryMiB: number;
}

export interface ExplainJob {
  queue: string;
  /** Gang size: this many distinct nodes, each holding `request`. */
  nodes: number;
  request: ResourceRequest;
  pendingReason: string | null;
  /** Dependencies not met yet (ADR 0023). */
  depsPending: number;
  /** Not placed before this (a retry's backoff, ADR 0022); null: no wait. */
  notBeforeMs: number | null;
  maxRuntimeSeconds: number | null;
}

export interface ExplainQueue {
  name: string;
  priority: number;
  /** A root's cap, a child's guarantee (ADR 0039); null: a root is unlimited. */
  quotaGpus: number | null;
  /** GPUs its live attempts hold now. */
  heldGpus: number;
  /** Its cohort's parent (ADR 0039); absent or null: a root. */
  parent?: string | null;
  /** GPUs a child may borrow beyond its guarantee; absent: 0. */
  borrowingLimitGpus?: number;
}

/** The queues' limits and what each holds: what a job's quota is judged against, as the scheduler does (judgeQuota). */
export interface ExplainQuotas {
  limits: QueueLimits;
  held: ReadonlyMap<string, number>;
}

export function explainQuotas(queues: readonly ExplainQueue[]): ExplainQuotas {
  return {
    limits: queueLimits(queues.map((q) => ({ name: q.name, parent: q.parent ?? null, quotaGpus: q.quotaGpus, borrowingLimitGpus: q.borrowingLimitGpus ?? 0 }))),
    held: new Map(queues.map((q) => [q.name, q.heldGpus])),
  };
}

export interface ExplainNode extends NodeCapacity {
  id: string;
  health: NodeHealth;
  cordoned: boolean;
}

/** A live attempt: what it holds where, and when it must end (start + maxRuntimeSeconds), if ever. */
export interface RunningAttempt {
  queue: string;
  nodeIds: readonly string[];
  perNode: Amounts;
  startedAtMs: number;
  maxRuntimeSeconds: number | null;
}

/** A queued job ahead of this one in policy order (higher bands, then older in its band). */
export interface JobAhead {
  queue: string;
  nodes: number;
  request: ResourceRequest;
  maxRuntimeSeconds: number | null;
}

export interface ExplainSnapshot {
  nowMs: number;
  job: ExplainJob;
  queues: readonly ExplainQueue[];
  nodes: readonly ExplainNode[];
  running: readonly RunningAttempt[];
  /** Queued jobs ahead of it in its own queue, and overall (every queue, policy order). */
  aheadInQueue: number;
  aheadOverall: number;
  /** The jobs ahead, in policy order (bounded by the reader): the simulation starts them first where they fit. */
  ahead: readonly JobAhead[];
  /** The scheduler's backfill (ADR 0008); absent: runtime. Strict: nothing behind the reservation goes onto its nodes, and BACKFILL_WINDOW is never named. */
  backfill?: BackfillMode;
  /** Decayed fair share of its band and queue (ADR 0038); absent: not told (FAIR_SHARE is never named). */
  fairShare?: ExplainFairShare;
}

export type BlockerReason =
  | 'DEPENDENCY'
  | 'BACKOFF'
  | 'QUOTA_EXCEEDED'
  | 'NO_MATCHING_NODES'
  | 'NODES_CORDONED'
  | 'NODES_UNHEALTHY'
  | 'INSUFFICIENT_CAPACITY'
  | 'BACKFILL_WINDOW'
  | 'FAIR_SHARE';

export interface Blocker {
  reason: BlockerReason;
  detail: string;
  /** What is missing for it to go (zeros where the blocker is not about amounts). */
  deficit: Amounts;
}

export interface Counterfactual {
  change: 'FEWER_GPUS' | 'ANOTHER_MODEL' | 'ANOTHER_QUEUE' | 'UNCORDON_NODE';
  detail: string;
}

export interface Explanation {
  pendingReason: string | null;
  /** 1-based: 1 is next. */
  position: { queue: number; overall: number };
  blockers: Blocker[];
  wouldStartWith: Counterfactual[];
  /** null: nothing known ends in time (attempts without maxRuntimeSeconds), or it can never start as things are. */
  estimatedStartAtMs: number | null;
}

/** Most nodes offered as UNCORDON_NODE: enough to act on, short enough to read. */
const MAX_UNCORDON_SUGGESTIONS = 5;

const ZERO: Amounts = { gpus: 0, cpuCores: 0, memoryMiB: 0 };
const free = (n: NodeCapacity): Amounts => ({
  gpus: n.gpusTotal - n.gpusAllocated,
  cpuCores: n.cpuCores - n.cpuAllocated,
  memoryMiB: n.memoryMiB - n.memoryAllocated,
});
const shortfall = (have: Amounts, need: Amounts): Amounts => ({
  gpus: Math.max(0, need.gpus - have.gpus),
  cpuCores: Math.max(0, need.cpuCores - have.cpuCores),
  memoryMiB: Math.max(0, need.memoryMiB - have.memoryMiB),
});
/** The shortfall that is smallest, weighing each resource by what the job asks (so units compare). */
function nearest(shortfalls: Amounts[], need: Amounts): Amounts {
  const weight = (a: Amounts) =>
    (need.gpus ? a.gpus / need.gpus : 0) + (need.cpuCores ? a.cpuCores / need.cpuCores : 0) + (need.memoryMiB ? a.memoryMiB / need.memoryMiB : 0);
  return shortfalls.reduce((best, s) => (weight(s) < weight(best) ? s : best), shortfalls[0] ?? need);
}
const usable = (n: ExplainNode) => n.health === 'HEALTHY' && !n.cordoned;
/** Best fit, as the scheduler places: the node left with the fewest free GPUs, then cores, then memory, then id. */
const fullestFirst = (a: ExplainNode, b: ExplainNode) => {
  const fa = free(a);
  const fb = free(b);
  return fa.gpus - fb.gpus || fa.cpuCores - fb.cpuCores || fa.memoryMiB - fb.memoryMiB || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
};
/** The `count` fullest nodes; one pass for a single node (most jobs), where sorting a large fleet per job would dominate. */
function bestFit(fitting: ExplainNode[], count: number): ExplainNode[] {
  if (count !== 1) return fitting.sort(fullestFirst).slice(0, count);
  let best: ExplainNode | undefined;
  for (const n of fitting) if (best === undefined || fullestFirst(n, best) < 0) best = n;
  return best ? [best] : [];
}
const model = (r: ResourceRequest) => (r.gpuModel === null || r.gpus === 0 ? 'any model' : r.gpuModel);

/** Everything that keeps a job of this shape, in this queue, off these nodes now; empty: it would start. */
export function blockersOf(job: ExplainJob, quotas: ExplainQuotas, nodes: readonly ExplainNode[], nowMs: number): Blocker[] {
  const blockers: Blocker[] = [];
  const need: Amounts = { gpus: job.request.gpus, cpuCores: job.request.cpuCores, memoryMiB: job.request.memoryMiB };
  if (job.depsPending > 0) blockers.push({ reason: 'DEPENDENCY', detail: `waits for ${job.depsPending} job(s) it depends on`, deficit: ZERO });
  if (job.notBeforeMs !== null && job.notBeforeMs > nowMs) {
    blockers.push({ reason: 'BACKOFF', detail: `retry backoff until ${new Date(job.notBeforeMs).toISOString()}`, deficit: ZERO });
  }
  const quota = quotaBlocker(job.queue, job.request.gpus * job.nodes, quotas);
  if (quota) blockers.push(quota);
  const matching = nodes.filter((n) => couldEverFit(n, job.request));
  if (matching.length < job.nodes) {
    const sameModel = nodes.filter(
      (n) =>
        couldEverFit(n, { ...job.request, cpuCores: 0, memoryMiB: 0, gpus: 0 }) &&
        (job.request.gpus === 0 || job.request.gpuModel === null || n.gpuModel === job.request.gpuModel),
    );
    blockers.push({
      reason: 'NO_MATCHING_NODES',
      detail: `${matching.length} node(s) of ${model(job.request)} could ever hold ${job.request.gpus} GPUs, ${job.request.cpuCores} cores, ${job.request.memoryMiB} MiB; it needs ${job.nodes}`,
      deficit: nearest(
        sameModel.map((n) => shortfall({ gpus: n.gpusTotal, cpuCores: n.cpuCores, memoryMiB: n.memoryMiB }, need)),
        need,
      ),
    });
    return blockers;
  }
  const open = matching.filter(usable);
  const roomNow = open.filter((n) => fitsNow(n, job.request));
  const cordonedWithRoom = matching.filter((n) => n.cordoned && fitsNow(n, job.request));
  const unhealthyWithRoom = matching.filter((n) => !n.cordoned && n.health !== 'HEALTHY' && fitsNow(n, job.request));
  const cordoned = matching.filter((n) => n.cordoned);
  const unhealthy = matching.filter((n) => !n.cordoned && n.health !== 'HEALTHY');
  // While too few open nodes have room, a node that is off limits is a reason whenever, open, it
  // would have made a difference: it has room now, or without it too few nodes could ever hold the
  // job. Once enough open nodes have room, nodes off limits block nothing.
  const placeable = roomNow.length >= job.nodes;
  if (!placeable && cordoned.length > 0 && (cordonedWithRoom.length > 0 || open.length < job.nodes)) {
    blockers.push({
      reason: 'NODES_CORDONED',
      detail: `${cordoned.length} of the ${matching.length} node(s) of ${model(job.request)} that could hold it are cordoned (${cordonedWithRoom.length} with room now)`,
      deficit: ZERO,
    });
  }
  if (!placeable && unhealthy.length > 0 && (unhealthyWithRoom.length > 0 || open.length < job.nodes)) {
    blockers.push({
      reason: 'NODES_UNHEALTHY',
      detail: `${unhealthy.length} of the ${matching.length} node(s) of ${model(job.request)} that could hold it are not HEALTHY`,
      deficit: ZERO,
    });
  }
  if (!placeable && open.length >= job.nodes) {
    const short = open.filter((n) => !fitsNow(n, job.request)).map((n) => shortfall(free(n), need));
    blockers.push({
      reason: 'INSUFFICIENT_CAPACITY',
      detail: `${roomNow.length} of the ${open.length} open node(s) of ${model(job.request)} have room now; it needs ${job.nodes}`,
      deficit: nearest(short, need),
    });
  }
  return blockers;
}

/** QUOTA_EXCEEDED when `gpus` more would take `queue` past its own limit or its cohort past its guarantees. */
function quotaBlocker(queue: string, gpus: number, { limits, held }: ExplainQuotas): Blocker | null {
  const verdict = judgeQuota(limits, held, queue, gpus);
  if (verdict === 'ADMIT') return null;
  const holds = held.get(queue) ?? 0;
  if (verdict === 'QUEUE_LIMIT') {
    const cap = limits.cap.get(queue)!;
    const guarantee = limits.guarantee.get(queue);
    const of =
      guarantee !== undefined && limits.cohortOf.get(queue) !== queue
        ? `its ${cap} GPUs (guarantee ${guarantee} + borrowing ${cap - guarantee})`
        : `its ${cap} GPUs`;
    return {
      reason: 'QUOTA_EXCEEDED',
      detail: `queue ${queue} holds ${holds} of ${of}; this job needs ${gpus}`,
      deficit: { ...ZERO, gpus: Math.max(0, holds + gpus - cap) },
    };
  }
  const cohort = limits.cohortOf.get(queue)!;
  const cap = limits.cohortCap.get(cohort)!;
  const together = cohortHeld(limits, held, cohort);
  return {
    reason: 'QUOTA_EXCEEDED',
    detail: `cohort ${cohort} holds ${together} of its members' ${cap} guaranteed GPUs (queue ${queue}: ${holds}); this job needs ${gpus}`,
    deficit: { ...ZERO, gpus: Math.max(0, together + gpus - cap) },
  };
}

/** Single changes that would let it start now, each checked by asking blockersOf again. */
function counterfactuals(s: ExplainSnapshot, quotas: ExplainQuotas): Counterfactual[] {
  const out: Counterfactual[] = [];
  const startsWith = (job: ExplainJob, nodes: readonly ExplainNode[]) => blockersOf(job, quotas, nodes, s.nowMs).length === 0;
  // Blockers no change of shape or place can lift: nothing to suggest.
  if (s.job.depsPending > 0 || (s.job.notBeforeMs !== null && s.job.notBeforeMs > s.nowMs)) return out;
  for (let g = s.job.request.gpus - 1; g >= 1; g--) {
    if (startsWith({ ...s.job, request: { ...s.job.request, gpus: g } }, s.nodes)) {
      out.push({ change: 'FEWER_GPUS', detail: `${g} GPUs per node instead of ${s.job.request.gpus}` });
      break;
    }
  }
  if (s.job.request.gpus > 0) {
    const models = [...new Set(s.nodes.map((n) => n.gpuModel).filter((m): m is string => m !== null && m !== s.job.request.gpuModel))].sort();
    for (const m of models) {
      if (startsWith({ ...s.job, request: { ...s.job.request, gpuModel: m } }, s.nodes)) out.push({ change: 'ANOTHER_MODEL', detail: `gpuModel ${m}` });
    }
  }
  for (const q of s.queues) {
    if (q.name !== s.job.queue && startsWith({ ...s.job, queue: q.name }, s.nodes)) out.push({ change: 'ANOTHER_QUEUE', detail: `queue ${q.name}` });
  }
  let offered = 0;
  for (const n of s.nodes) {
    if (offered >= MAX_UNCORDON_SUGGESTIONS) break;
    if (!n.cordoned || !couldEverFit(n, s.job.request)) continue;
    const uncordoned = s.nodes.map((x) => (x.id === n.id ? { ...x, cordoned: false } : x));
    if (startsWith(s.job, uncordoned)) {
      out.push({ change: 'UNCORDON_NODE', detail: `uncordon node ${n.id}` });
      offered++;
    }
  }
  return out;
}

/** Now, in the simulation: the job would fit the nodes held for a job ahead, but its maxRuntimeSeconds does not fit before that job's estimated start. */
interface OutsideWindow {
  startMs: number;
  maxRuntimeSeconds: number | null;
}

/**
 * When it may start: a backfill-style simulation. Running attempts end at start +
 * maxRuntimeSeconds (attempts without one never end, as far as anyone can know); at now and at
 * each end, the jobs ahead that fit start (and end in turn after their own maxRuntimeSeconds),
 * then this job if nothing blocks it. As in the scheduler's plan (ADR 0008), the first of them kept
 * out by capacity holds the nodes chooseReservation picks, with an estimated start from what ends
 * there, and behind it only a job whose maxRuntimeSeconds ends by then starts there (runtime
 * backfill): without the reservation, this job backfilled into room the scheduler keeps for a
 * bigger job ahead, and the estimate came early (bench:explain, ADR 0024). Blockers no end lifts
 * (dependencies, cordons, no matching node) leave it null; a backoff moves it to its end at the
 * earliest. `outside`: at now, the job was kept off the held nodes only by its runtime.
 */
function estimateStart(s: ExplainSnapshot, limits: QueueLimits): { at: number | null; outside: OutsideWindow | null; keptOffHeld: boolean } {
  if (s.job.depsPending > 0) return { at: null, outside: null, keptOffHeld: false };
  const runtime = (s.backfill ?? 'runtime') === 'runtime';
  const nodes = s.nodes.map((n) => ({ ...n }));
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const held = new Map(s.queues.map((q) => [q.name, q.heldGpus]));
  type End = { at: number; queue: string; nodeIds: readonly string[]; perNode: Amounts };
  const ends: End[] = s.running
    .filter((r) => r.maxRuntimeSeconds !== null)
    .map((r) => ({ at: Math.max(s.nowMs, r.startedAtMs + r.maxRuntimeSeconds! * 1000), queue: r.queue, nodeIds: r.nodeIds, perNode: r.perNode }));
  /** What runs and never ends as far as anyone knows: it counts against a reservation's estimated start. */
  const forever: Array<{ nodeIds: readonly string[]; perNode: Amounts }> = s.running.filter((r) => r.maxRuntimeSeconds === null);
  const waiting = [...s.ahead];
  const release = (end: End) => {
    for (const id of end.nodeIds) {
      const i = index.get(id);
      if (i === undefined) continue;
      const n = nodes[i];
      nodes[i] = {
        ...n,
        gpusAllocated: n.gpusAllocated - end.perNode.gpus,
        cpuAllocated: n.cpuAllocated - end.perNode.cpuCores,
        memoryAllocated: n.memoryAllocated - end.perNode.memoryMiB,
      };
    }
    held.set(end.queue, Math.max(0, (held.get(end.queue) ?? 0) - end.perNode.gpus * end.nodeIds.length));
  };
  const ranksOn = (id: string): RankEnd[] => [
    ...ends.filter((e) => e.nodeIds.includes(id)).map((e) => ({ ...e.perNode, endsAtMs: e.at })),
    ...forever.filter((f) => f.nodeIds.includes(id)).map((f) => ({ ...f.perNode, endsAtMs: Number.POSITIVE_INFINITY })),
  ];
  /** Nodes the first job kept out by capacity holds at this moment (the scheduler's reservation), and when that job is estimated to start. */
  let reserved: ReadonlySet<string> = new Set();
  let windowEnd = Number.POSITIVE_INFINITY;
  type Sim = { queue: string; nodes: number; request: ResourceRequest; maxRuntimeSeconds: number | null };
  /** Starts `job` if it fits now (quota and `nodes` open nodes with room, reserved ones only within the window), best fit first as the scheduler places. */
  const tryStart = (job: Sim, at: number): 'started' | 'quota' | 'capacity' => {
    const gpus = job.request.gpus * job.nodes;
    if (judgeQuota(limits, held, job.queue, gpus) !== 'ADMIT') return 'quota';
    const inWindow = fitsBackfillWindow(job.maxRuntimeSeconds, at, windowEnd);
    const room = nodes.filter((n) => usable(n) && fitsNow(n, job.request));
    const outside = room.filter((n) => !reserved.has(n.id));
    // Outside the reservation first, as the scheduler tries them.
    let chosen = bestFit(outside, job.nodes);
    if (chosen.length < job.nodes && inWindow) chosen = bestFit(room, job.nodes);
    if (chosen.length < job.nodes) return 'capacity';
    for (const c of chosen) nodes[index.get(c.id)!] = allocate(nodes[index.get(c.id)!], job.request);
    held.set(job.queue, (held.get(job.queue) ?? 0) + gpus);
    const perNode = { gpus: job.request.gpus, cpuCores: job.request.cpuCores, memoryMiB: job.request.memoryMiB };
    if (job.maxRuntimeSeconds !== null) ends.push({ at: at + job.maxRuntimeSeconds * 1000, queue: job.queue, nodeIds: chosen.map((c) => c.id), perNode });
    else forever.push({ nodeIds: chosen.map((c) => c.id), perNode });
    return 'started';
  };
  /** Tries `job`; the first one kept out by capacity at this moment reserves its nodes. */
  const attempt = (job: Sim, at: number): 'started' | 'quota' | 'capacity' => {
    const outcome = tryStart(job, at);
    if (outcome === 'capacity' && reserved.size === 0) {
      // Strict: the nodes nearest to fitting, and no window (fitsBackfillWindow never admits an unknown start).
      const readyAt = runtime ? (n: NodeCapacity & { id: string }) => readyAtMs(n, ranksOn(n.id), job.request, at) : undefined;
      const ids = chooseReservation({ resources: job.request, nodes: job.nodes }, nodes, readyAt) ?? [];
      reserved = new Set(ids);
      windowEnd =
        ids.length === 0 || !runtime
          ? Number.POSITIVE_INFINITY
          : estimatedStartMs(
              job.request,
              ids.map((id) => nodes[index.get(id)!]),
              ranksOn,
              at,
            );
    }
    return outcome;
  };
  /** Whether the job would have room if the held nodes were open to it. */
  const fitsWithHeldOpen = (job: Sim) => nodes.filter((n) => usable(n) && fitsNow(n, job.request)).length >= job.nodes;
  const earliest = Math.max(s.nowMs, s.job.notBeforeMs ?? s.nowMs);
  let outside: OutsideWindow | null = null;
  /** Strict backfill: at now, the job was kept out only by nodes held for a job ahead. */
  let keptOffHeld = false;
  let at = s.nowMs;
  for (;;) {
    reserved = new Set();
    windowEnd = Number.POSITIVE_INFINITY;
    for (let i = 0; i < waiting.length;) {
      if (attempt(waiting[i], at) === 'started') waiting.splice(i, 1);
      else i++;
    }
    const heldForAhead = reserved.size > 0;
    if (at >= earliest) {
      const outcome = attempt(s.job, at);
      if (outcome === 'started') return { at, outside, keptOffHeld };
      // Kept out now by nothing but the held nodes (their window, with runtime backfill): its own reservation (reserved was empty) is not one.
      if (outcome === 'capacity' && at === s.nowMs && heldForAhead && fitsWithHeldOpen(s.job)) {
        if (Number.isFinite(windowEnd)) outside = { startMs: windowEnd, maxRuntimeSeconds: s.job.maxRuntimeSeconds };
        else if (!runtime) keptOffHeld = true;
      }
    }
    ends.sort((a, b) => a.at - b.at);
    const nextEnd = ends[0]?.at ?? Infinity;
    // The next moment anything changes: an end, or the backoff's end while it is still ahead.
    const next = at < earliest ? Math.min(earliest, nextEnd) : nextEnd;
    if (next === Infinity) return { at: null, outside, keptOffHeld };
    at = next;
    while (ends.length > 0 && ends[0].at <= at) release(ends.shift()!);
  }
}

/** The blocker of a job kept off the nodes held for a job ahead by its maxRuntimeSeconds (runtime backfill, ADR 0008). */
function backfillWindowBlocker(o: OutsideWindow, nowMs: number): Blocker {
  const fits = backfillWindowSeconds(nowMs, o.startMs);
  const has = o.maxRuntimeSeconds === null ? 'it has none' : `it has ${o.maxRuntimeSeconds}`;
  return {
    reason: 'BACKFILL_WINDOW',
    detail: `the nodes it fits are held for a job ahead, estimated to start at ${new Date(o.startMs).toISOString()}; it may start there now with maxRuntimeSeconds of at most ${fits} (${has})`,
    deficit: ZERO,
  };
}

/** The explanation of one queued job from one snapshot. */
export function explainJob(s: ExplainSnapshot): Explanation {
  const quotas = explainQuotas(s.queues);
  const blockers = blockersOf(s.job, quotas, s.nodes, s.nowMs);
  const estimate = estimateStart(s, quotas.limits);
  if (estimate.outside) blockers.push(backfillWindowBlocker(estimate.outside, s.nowMs));
  // Strict backfill's counterpart of BACKFILL_WINDOW: no limit of its own would let it on (ADR 0008).
  const held: Blocker | null =
    estimate.keptOffHeld && blockers.length === 0
      ? {
          reason: 'INSUFFICIENT_CAPACITY',
          detail: 'the nodes with room for it are held for a job ahead, and strict backfill lets nothing else onto them',
          deficit: ZERO,
        }
      : null;
  if (held) blockers.push(held);
  // Who gets capacity first as it frees: only said while it waits for capacity (placeable now, it goes
  // next cycle whatever its standing). Not a blocker of blockersOf: no change of shape or place lifts it.
  const behind =
    s.fairShare && blockers.some((b) => b.reason === 'INSUFFICIENT_CAPACITY' || b.reason === 'BACKFILL_WINDOW')
      ? fairShareBlockerDetail(s.fairShare, s.job.queue)
      : null;
  if (behind !== null) blockers.push({ reason: 'FAIR_SHARE', detail: behind, deficit: ZERO });
  return {
    pendingReason: s.job.pendingReason,
    position: { queue: s.aheadInQueue + 1, overall: s.aheadOverall + 1 },
    blockers,
    // Nothing blocks it (the next cycle places it): no change is needed. The window is not a blocker
    // the changes are checked against (blockersOf does not see it); its detail says what would do.
    wouldStartWith: blockers.every((b) => b.reason === 'BACKFILL_WINDOW' || b === held) ? [] : counterfactuals(s, quotas),
    estimatedStartAtMs: estimate.at,
  };
}
