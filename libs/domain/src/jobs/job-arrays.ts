import { JobState, isTerminal } from './job-state';

/**
 * Job arrays (contract §4.7, ADR 0025): one request creates a parent and `size` children; child i
 * runs with GANTRY_ARRAY_INDEX=i. The parent is never placed: its state summarises its children's.
 */

/** Most children one array may have (contract §4.7). */
export const ARRAY_SIZE_MAX = 10_000;

/**
 * Most bytes an array's children may copy from the request together: size x (command + env +
 * labels). 10,000 children of 1 KiB each fit; 10,000 of the 64 KiB an env may be do not (640 MB
 * of rows written in one transaction would stall the database for every other client).
 */
export const ARRAY_COPIED_BYTES_MAX = 32 * 1024 * 1024;

/** Pending reason of a child held back because its array already has `parallelism` children placed. */
export const ARRAY_PARALLELISM = 'ARRAY_PARALLELISM';

/** How many of an array's children are in each state. */
export type ArrayChildCounts = Readonly<Record<JobState, number>>;

export const NO_CHILDREN: ArrayChildCounts = { QUEUED: 0, SCHEDULED: 0, RUNNING: 0, SUCCEEDED: 0, FAILED: 0, CANCELLED: 0 };

/**
 * The parent's state from its children's (and whether the parent was cancelled):
 * - every child ended: CANCELLED if the parent was cancelled; else FAILED if any child failed; else
 *   CANCELLED if any child was cancelled (on its own); else SUCCEEDED;
 * - else RUNNING once any child has been placed (counted as: one is SCHEDULED, RUNNING or ended),
 *   and it stays RUNNING while a child is requeued for a retry: the parent does not go back;
 * - else QUEUED.
 * So a parent moves QUEUED -> RUNNING -> (SUCCEEDED | FAILED | CANCELLED), or QUEUED -> CANCELLED
 * (every child cancelled before any was placed). It is never SCHEDULED: it is never placed itself.
 */
export function arrayParentState(children: ArrayChildCounts, parent: { state: JobState; cancelRequested: boolean }): JobState {
  if (isTerminal(parent.state)) return parent.state;
  const ended = children.SUCCEEDED + children.FAILED + children.CANCELLED;
  const total = ended + children.QUEUED + children.SCHEDULED + children.RUNNING;
  if (total > 0 && ended === total) {
    if (parent.cancelRequested) return 'CANCELLED';
    if (children.FAILED > 0) return 'FAILED';
    if (children.CANCELLED > 0) return 'CANCELLED';
    return 'SUCCEEDED';
  }
  if (parent.state === 'RUNNING' || children.SCHEDULED + children.RUNNING > 0 || children.SUCCEEDED + children.FAILED > 0) return 'RUNNING';
  return 'QUEUED';
}

/**
 * The states a parent passes through from `from` to `to`, one STATE_CHANGED event each: the job
 * state machine's edges, except that a parent goes QUEUED -> RUNNING without SCHEDULED (it is never
 * placed). Its children may all end between two looks, so QUEUED -> SUCCEEDED is [RUNNING, SUCCEEDED].
 */
export function arrayParentPath(from: JobState, to: JobState): JobState[] {
  if (from === to) return [];
  if (from === 'QUEUED' && (to === 'SUCCEEDED' || to === 'FAILED')) return ['RUNNING', to];
  return [to];
}

/** A queued child as the scheduler reads it: its array, and that array's parallelism (null: no cap). */
export interface ArrayCandidate {
  id: string;
  arrayOf: string | null;
  arrayParallelism: number | null;
}

export interface ParallelismCut<T> {
  /** The candidates the cycle may place, in their order. */
  admitted: T[];
  /** Children left out: their arrays already have, or this cycle would give them, `parallelism` placed. */
  held: Array<{ jobId: string; reason: typeof ARRAY_PARALLELISM }>;
}

/**
 * Caps each array at `parallelism` children SCHEDULED or RUNNING: given how many each array has
 * now (`active`, read with the candidate batch), only the first `parallelism - active` of its queued
 * children (in the order given) stay candidates. Jobs outside arrays, and arrays without a cap, pass.
 * Placement may still leave an admitted child waiting; it is then not placed, and the cap holds.
 */
export function capArrayParallelism<T extends ArrayCandidate>(candidates: readonly T[], active: ReadonlyMap<string, number>): ParallelismCut<T> {
  const room = new Map<string, number>();
  const admitted: T[] = [];
  const held: ParallelismCut<T>['held'] = [];
  for (const c of candidates) {
    if (c.arrayOf === null || c.arrayParallelism === null) {
      admitted.push(c);
      continue;
    }
    const left = room.get(c.arrayOf) ?? Math.max(0, c.arrayParallelism - (active.get(c.arrayOf) ?? 0));
    if (left > 0) {
      admitted.push(c);
      room.set(c.arrayOf, left - 1);
    } else {
      room.set(c.arrayOf, 0);
      held.push({ jobId: c.id, reason: ARRAY_PARALLELISM });
    }
  }
  return { admitted, held };
}
