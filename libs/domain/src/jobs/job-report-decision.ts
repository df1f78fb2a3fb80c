import { RankState, attemptOutcome, isRankFinished } from './attempt-outcome';
import { JobState, isTerminal } from './job-state';
import { transitionPath } from './job-state-machine';

export interface JobSnapshot {
  state: JobState;
  attempt: number;
}

export interface RankSnapshot {
  nodeId: string;
  state: RankState;
  /** Its capacity was given back. Unfinished and released means the control plane took it away (node lost). */
  released?: boolean;
}

export interface AgentReport {
  nodeId: string;
  attempt: number;
  state: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
}

export type ReportDecision =
  /** Not the job's current attempt, or a rank the control plane took away: fenced off. */
  | { kind: 'stale'; killAttempt: boolean }
  /**
   * The job's current attempt, from a node that holds no rank of it: no agent can honestly send
   * this (a node only runs what it was placed), so it changes nothing and is refused as a forgery.
   */
  | { kind: 'foreign' }
  /** The attempt is current. `path` is the job's state changes to commit, in order (may be empty). */
  | {
      kind: 'apply';
      rankState: RankState;
      /** The reporting rank just finished: its capacity is released now, once. */
      releaseRank: boolean;
      path: JobState[];
      /** Ranks still live on other nodes after the job reached a terminal state: KILL them. */
      killNodeIds: string[];
    }
  /** Current attempt, but the job is already terminal: a conflict, nothing changes. */
  | { kind: 'rejected'; reason: 'TERMINAL_STATE' | 'ILLEGAL_TRANSITION' };

/** Decides what one agent report does to a job, given the ranks of its current attempt. */
export function decideReport(job: JobSnapshot, ranks: readonly RankSnapshot[], report: AgentReport): ReportDecision {
  const rank = ranks.find((r) => r.nodeId === report.nodeId);
  if (report.attempt === job.attempt && !rank) return { kind: 'foreign' };
  if (report.attempt !== job.attempt || !rank || (rank.released && !isRankFinished(rank.state))) {
    return { kind: 'stale', killAttempt: report.state === 'RUNNING' };
  }
  if (isRankFinished(rank.state)) {
    // A rank that finished stays finished: the same end repeated is accepted, anything else is a conflict.
    if (rank.state === report.state) return { kind: 'apply', rankState: rank.state, releaseRank: false, path: [], killNodeIds: [] };
    return { kind: 'rejected', reason: isTerminal(job.state) ? 'TERMINAL_STATE' : 'ILLEGAL_TRANSITION' };
  }
  const nextRanks = ranks.map((r) => (r.nodeId === report.nodeId ? { ...r, state: report.state as RankState } : r));
  const target = attemptOutcome(nextRanks.map((r) => r.state));
  if (isTerminal(job.state)) {
    if (target === job.state || report.state !== 'RUNNING') {
      // The job already ended (say, cancelled); the rank's own end is still recorded so its capacity is freed.
      return { kind: 'apply', rankState: report.state, releaseRank: isRankFinished(report.state), path: [], killNodeIds: [] };
    }
    return { kind: 'rejected', reason: 'TERMINAL_STATE' };
  }
  const path = transitionPath(job.state, target);
  if (path === null) return { kind: 'rejected', reason: 'ILLEGAL_TRANSITION' };
  const endsJob = path.length > 0 && isTerminal(path[path.length - 1]);
  const killNodeIds = endsJob ? nextRanks.filter((r) => !isRankFinished(r.state)).map((r) => r.nodeId) : [];
  return { kind: 'apply', rankState: report.state, releaseRank: isRankFinished(report.state), path, killNodeIds };
}
