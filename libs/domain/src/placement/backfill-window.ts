import { NodeCapacity, ResourceRequest, fitsNow } from '../resources/resources';

/*
 * Runtime-aware backfill (ADR 0008): the reservation's estimated start is when the work on its
 * nodes has ended far enough for the head to fit, each running rank ending at its start plus its
 * job's maxRuntimeSeconds (the agent stops it then, ADR 0019). A later job may use reserved nodes
 * only if its own maxRuntimeSeconds ends by then, so it never pushes the head past its estimate.
 */

/** A rank holding capacity on a node, as read with the node's row: what it holds, when it started and how long it may run. */
export interface RankRun {
  gpus: number;
  cpuCores: number;
  memoryMiB: number;
  /** null: placed but not started yet (counted as starting now). */
  startedAtMs: number | null;
  /** null: no limit, so nobody can say when it ends. */
  maxRuntimeSeconds: number | null;
}

/** What the planner is told of the ranks on a node; a node it has no entry for counts as running work of unknown end. */
export interface NodeRunsLookup {
  get(nodeId: string): readonly RankRun[] | undefined;
}

/** GANTRY_SCHEDULER_BACKFILL: `strict` keeps every later job off reserved nodes; `runtime` lets in those that end before the head's estimated start. */
export type BackfillMode = 'runtime' | 'strict';
export const BACKFILL_MODES: readonly BackfillMode[] = ['runtime', 'strict'];

/** What runtime-aware backfill plans with: the time, and the ranks on the nodes a reservation may choose. */
export interface BackfillInput {
  nowMs: number;
  runs: NodeRunsLookup;
}

/** A rank's end: start (now if not started) plus its limit, not before now; Infinity without a limit. */
export function rankEndMs(rank: Pick<RankRun, 'startedAtMs' | 'maxRuntimeSeconds'>, nowMs: number): number {
  if (rank.maxRuntimeSeconds === null) return Number.POSITIVE_INFINITY;
  return Math.max(nowMs, (rank.startedAtMs ?? nowMs) + rank.maxRuntimeSeconds * 1000);
}

/** A rank as the estimate sees it: what it gives back, and when. */
export interface RankEnd {
  gpus: number;
  cpuCores: number;
  memoryMiB: number;
  endsAtMs: number;
}

/**
 * When `req` fits on `node`: now if it does, else the first rank end after which what has ended
 * leaves room (ends in order, each giving back what it holds); Infinity if no known end does.
 */
export function nodeReadyAtMs(node: NodeCapacity, ranks: readonly RankEnd[], req: ResourceRequest, nowMs: number): number {
  if (fitsNow(node, req)) return nowMs;
  const byEnd = [...ranks].sort((a, b) => a.endsAtMs - b.endsAtMs);
  let n = node;
  for (const r of byEnd) {
    if (r.endsAtMs === Number.POSITIVE_INFINITY) break;
    n = { ...n, gpusAllocated: n.gpusAllocated - r.gpus, cpuAllocated: n.cpuAllocated - r.cpuCores, memoryAllocated: n.memoryAllocated - r.memoryMiB };
    if (fitsNow(n, req)) return Math.max(nowMs, r.endsAtMs);
  }
  return Number.POSITIVE_INFINITY;
}

/** nodeReadyAtMs, for a node whose ranks may be unknown: then ready now if `req` fits, else never. */
export function readyAtMs(node: NodeCapacity, ranks: readonly RankEnd[] | undefined, req: ResourceRequest, nowMs: number): number {
  return ranks === undefined ? (fitsNow(node, req) ? nowMs : Number.POSITIVE_INFINITY) : nodeReadyAtMs(node, ranks, req, nowMs);
}

/**
 * The head's estimated start on its reserved nodes: the latest of their ready times (a gang needs
 * every rank's node). A node `ranksOn` knows nothing of counts as never ready unless the head
 * fits it now. Infinity: unknown, and then nothing backfills (strict).
 */
export function estimatedStartMs(
  req: ResourceRequest,
  nodes: ReadonlyArray<NodeCapacity & { id: string }>,
  ranksOn: (nodeId: string) => readonly RankEnd[] | undefined,
  nowMs: number,
): number {
  let latest = nowMs;
  for (const n of nodes) {
    const ready = readyAtMs(n, ranksOn(n.id), req, nowMs);
    if (ready > latest) latest = ready;
    if (latest === Number.POSITIVE_INFINITY) break;
  }
  return latest;
}

/** Whether a job may run on reserved nodes: its maxRuntimeSeconds ends by the head's estimated start (never without one, never before an unknown start). */
export function fitsBackfillWindow(maxRuntimeSeconds: number | null | undefined, nowMs: number, startMs: number): boolean {
  if (maxRuntimeSeconds === null || maxRuntimeSeconds === undefined || !Number.isFinite(startMs)) return false;
  return nowMs + maxRuntimeSeconds * 1000 <= startMs;
}

/** The longest maxRuntimeSeconds that fits the window (0 when none does): what explain tells a job kept out. */
export function backfillWindowSeconds(nowMs: number, startMs: number): number {
  return Math.max(0, Math.floor((startMs - nowMs) / 1000));
}
