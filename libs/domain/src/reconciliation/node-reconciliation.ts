import { RankState } from '../jobs/attempt-outcome';

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
  | { kind: 'KILL'; jobId: string; attempt: number; reason: 'ORPHAN' | 'CANCEL_REQUESTED' };

const key = (jobId: string, attempt: number) => `${jobId}#${attempt}`;

/**
 * Level-based reconciliation of one node: compares the agent's whole truth (its heartbeat's
 * `running`) with what the control plane wants there, and returns the commands that close the
 * gap. A lost or repeated command is harmless because this runs on every heartbeat.
 */
export function reconcileNode(observed: ObservedAttempt[], desired: DesiredRank[], nowMs: number, graceMs: number): ReconcileAction[] {
  const actions: ReconcileAction[] = [];
  const wanted = new Map(desired.map((d) => [key(d.jobId, d.attempt), d]));
  const running = new Set(observed.map((o) => key(o.jobId, o.attempt)));
  for (const o of observed) {
    const d = wanted.get(key(o.jobId, o.attempt));
    if (!d) actions.push({ kind: 'KILL', jobId: o.jobId, attempt: o.attempt, reason: 'ORPHAN' });
    else if (d.cancelRequested) actions.push({ kind: 'KILL', jobId: o.jobId, attempt: o.attempt, reason: 'CANCEL_REQUESTED' });
  }
  for (const d of desired) {
    if (d.rankState !== 'SCHEDULED' || d.cancelRequested) continue;
    if (!running.has(key(d.jobId, d.attempt)) && nowMs - d.placedAt >= graceMs) {
      actions.push({ kind: 'RUN', jobId: d.jobId, attempt: d.attempt, reason: 'MISSING' });
    }
  }
  return actions;
}
