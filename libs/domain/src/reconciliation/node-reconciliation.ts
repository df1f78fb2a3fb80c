import { RankState } from '../jobs/attempt-outcome';
import { startTimedOut } from './start-timeout';

/** A rank the control plane wants on a node (attempt current, capacity not yet released). */
export interface DesiredRank {
  jobId: string;
  attempt: number;
  rankState: RankState;
  cancelRequested: boolean;
  /** When the rank was placed (ms). */
  placedAt: number;
}

/** What a heartbeat says the node is running. */
export interface ObservedAttempt {
  jobId: string;
  attempt: number;
}

export type ReconcileAction =
  /** Placed but not running after the grace period: the RUN was lost, send it again. */
  | { kind: 'RUN'; jobId: string; attempt: number; reason: 'MISSING' }
  /** Running but not wanted (unknown, old attempt, or ended here): stop it. */
  | { kind: 'KILL'; jobId: string; attempt: number; reason: 'ORPHAN' | 'CANCEL_REQUESTED' }
  /** RUNNING here by our records, but the node has not listed it for the phantom grace: the attempt is lost. */
  | { kind: 'LOST'; jobId: string; attempt: number; reason: 'PHANTOM' }
  /** Placed here but not started within the start timeout: the attempt is lost and placed again, elsewhere if it can be (ADR 0035). */
  | { kind: 'LOST'; jobId: string; attempt: number; reason: 'START_TIMEOUT' };

export interface NodeReconcileResult {
  actions: ReconcileAction[];
  /** Since when each RUNNING rank has been missing from the node's beats (carry into the next call). */
  missingSince: Map<string, number>;
}

const key = (jobId: string, attempt: number) => `${jobId}#${attempt}`;

/**
 * Level-based reconciliation of one node: compares the agent's whole truth (its heartbeat's
 * `running`) with what the control plane wants there, and returns the commands that close the
 * gap. A lost or repeated command is harmless because this runs on every heartbeat.
 * `graceMs` delays a repeated RUN; `phantomGraceMs` is how long a RUNNING rank may be missing from
 * the node's beats (an agent restart, a process that died unreported) before its attempt is lost.
 * `absenceFrom` (absenceCountsFrom) is the earliest moment a miss may count from: the control
 * plane's own silence (a broker restart, a consumer rejoining) is not the node's. Null: the view is
 * stale now and no attempt is judged lost (misses are still recorded). `startTimeoutMs`: how long a
 * placed rank (not cancelled) may go unstarted before its attempt is lost (startTimedOut), counted
 * the same way.
 */
export function reconcileNode(
  observed: ObservedAttempt[],
  desired: DesiredRank[],
  nowMs: number,
  graceMs: number,
  missingSince: ReadonlyMap<string, number> = new Map(),
  phantomGraceMs = graceMs * 3,
  absenceFrom: number | null = Number.NEGATIVE_INFINITY,
  startTimeoutMs = Number.POSITIVE_INFINITY,
): NodeReconcileResult {
  const actions: ReconcileAction[] = [];
  const nextMissing = new Map<string, number>();
  const wanted = new Map(desired.map((d) => [key(d.jobId, d.attempt), d]));
  const running = new Set(observed.map((o) => key(o.jobId, o.attempt)));
  for (const o of observed) {
    const d = wanted.get(key(o.jobId, o.attempt));
    if (!d) actions.push({ kind: 'KILL', jobId: o.jobId, attempt: o.attempt, reason: 'ORPHAN' });
    else if (d.cancelRequested) actions.push({ kind: 'KILL', jobId: o.jobId, attempt: o.attempt, reason: 'CANCEL_REQUESTED' });
  }
  for (const d of desired) {
    const k = key(d.jobId, d.attempt);
    if (running.has(k)) continue;
    if (d.rankState === 'RUNNING') {
      const since = missingSince.get(k) ?? nowMs;
      nextMissing.set(k, since);
      if (absenceFrom !== null && nowMs - Math.max(since, absenceFrom) >= phantomGraceMs)
        actions.push({ kind: 'LOST', jobId: d.jobId, attempt: d.attempt, reason: 'PHANTOM' });
      continue;
    }
    if (d.rankState !== 'SCHEDULED' || d.cancelRequested) continue;
    if (startTimedOut(d.placedAt, nowMs, startTimeoutMs, absenceFrom))
      actions.push({ kind: 'LOST', jobId: d.jobId, attempt: d.attempt, reason: 'START_TIMEOUT' });
    else if (nowMs - d.placedAt >= graceMs) actions.push({ kind: 'RUN', jobId: d.jobId, attempt: d.attempt, reason: 'MISSING' });
  }
  return { actions, missingSince: nextMissing };
}
