import { RankState, isRankFinished } from './attempt-outcome';
import { JobState, isTerminal } from './job-state';
import { AgentReport, RankSnapshot, decideReport } from './job-report-decision';
import { RetryPolicy, decideExitRetry } from './retry-policy';

/** A job as read before its reports are applied, with the ranks of its current attempt. */
export interface ReportedJob {
  state: JobState;
  attempt: number;
  /** startedAt is already set. */
  started: boolean;
  /** The current attempt's nodes, by rank (carried on STATE_CHANGED events). */
  nodeIds: readonly string[];
  ranks: readonly RankSnapshot[];
  /** Absent: a failed attempt always ends the job. */
  retryPolicy?: RetryPolicy;
  /** Earlier attempts that used no retry (ended by a drain or a preemption). */
  retriesForgiven?: number;
  /**
   * The current attempt was told to stop for a preemptor (and not cancelled): when it ends other
   * than by succeeding, the job goes back to QUEUED (reason PREEMPTED, no retry used), once every
   * rank has reported its end, since each keeps its devices until then (ADR 0026).
   */
  preempted?: boolean;
}

export interface JobReport extends AgentReport {
  exitCode?: number | null;
  reason?: string | null;
}

export type ReportOutcome = 'applied' | 'noop' | 'stale' | 'rejected' | 'unknown-job' | 'foreign';

export interface FoldedEvent {
  type: 'STATE_CHANGED' | 'REPORT_REJECTED';
  fromState?: JobState;
  toState?: JobState;
  attempt: number;
  nodeIds: readonly string[];
  reason?: string;
}

/** What one rank's row must become: its state, and whether its capacity is given back now. */
export interface RankWrite {
  nodeId: string;
  state: RankState;
  exitCode: number | null;
  release: boolean;
}

/**
 * Everything a sequence of reports does to one job, to be written together under one
 * compare-and-set on the version the job was read at.
 */
export interface FoldedReports {
  /** One per report, in order. */
  outcomes: ReportOutcome[];
  /** The job row must be written (compare-and-set): a state, rank or event changed. */
  touched: boolean;
  /** The job's state after all the reports. */
  state: JobState;
  /** Set startedAt now. */
  start: boolean;
  /** The job ended: set finishedAt now, with this exit code and reason. */
  end: { exitCode: number | null; reason: string | null } | null;
  /**
   * The attempt failed with an exit code its retry policy lists: the job is back in QUEUED, to be
   * placed again (as attempt + 1) no sooner than `delayMs` from now (pendingReason BACKOFF).
   */
  retry: { delayMs: number } | null;
  /** The preempted attempt ended: the job is back in QUEUED, its nodes cleared, one more retry forgiven. */
  preempted: boolean;
  /** In order; seqs follow the job's last one. */
  events: FoldedEvent[];
  /** Ranks whose row changes, at most one entry per node. */
  ranks: RankWrite[];
  /** KILLs to send: stale attempts still running, and a gang's live ranks once the job ended. */
  kills: Array<{ nodeId: string; attempt: number; reason: 'STALE_ATTEMPT' | 'GANG_ENDED' }>;
}

/** Where a fold's randomness comes from (backoff jitter): injected, so a test can fix it. */
export type RandomSource = () => number;

/**
 * Applies a node's (or several nodes') reports for one job in order, in memory, as if each had been
 * committed before the next was decided (decideReport for each against the state the previous left).
 * The reconciler writes the result in one statement; a report the next one depends on is never lost
 * between them because they commit together or not at all.
 */
export function foldReports(job: ReportedJob, reports: readonly JobReport[], random: RandomSource = Math.random): FoldedReports {
  let state = job.state;
  let start = false;
  let end: FoldedReports['end'] = null;
  let retry: FoldedReports['retry'] = null;
  let preempted = false;
  let touched = false;
  const ranks = job.ranks.map((r) => ({ ...r }));
  const written = new Map<string, RankWrite>();
  const events: FoldedEvent[] = [];
  const kills: FoldedReports['kills'] = [];
  const outcomes: ReportOutcome[] = [];

  for (const report of reports) {
    const decision = decideReport({ state, attempt: job.attempt }, ranks, report);
    if (decision.kind === 'foreign') {
      outcomes.push('foreign');
      continue;
    }
    if (decision.kind === 'stale') {
      if (decision.killAttempt) kills.push({ nodeId: report.nodeId, attempt: report.attempt, reason: 'STALE_ATTEMPT' });
      outcomes.push('stale');
      continue;
    }
    if (decision.kind === 'rejected') {
      touched = true;
      events.push({
        type: 'REPORT_REJECTED',
        attempt: report.attempt,
        nodeIds: [report.nodeId],
        reason: `${decision.reason}: ${report.state} while ${state}`,
      });
      outcomes.push('rejected');
      continue;
    }

    const rank = ranks.find((r) => r.nodeId === report.nodeId)!;
    const rankChanged = rank.state !== decision.rankState;
    const released = decision.releaseRank && !rank.released;
    if (rankChanged || released) {
      const before = written.get(rank.nodeId);
      written.set(rank.nodeId, {
        nodeId: rank.nodeId,
        state: decision.rankState,
        exitCode: report.exitCode ?? before?.exitCode ?? null,
        release: released || (before?.release ?? false),
      });
      rank.state = decision.rankState;
      rank.released = rank.released || released;
      // Ranks of one job change only under the job's compare-and-set, so two ranks reported at once
      // cannot each miss the other's end (which would leave a gang RUNNING forever).
      touched = true;
    }
    let path = decision.path;
    const endsPreempted = job.preempted && path.length > 0 && (path[path.length - 1] === 'FAILED' || path[path.length - 1] === 'CANCELLED');
    if (endsPreempted && ranks.some((r) => !isRankFinished(r.state))) {
      // A gang's other ranks were told to stop too, and hold their devices until each says it did.
      path = [];
    } else {
      for (const nodeId of decision.killNodeIds) kills.push({ nodeId, attempt: job.attempt, reason: 'GANG_ENDED' });
    }

    if (endsPreempted && path.length > 0) {
      touched = true;
      path = [...path.slice(0, -1), 'QUEUED'];
      preempted = true;
      let from = state;
      for (const to of path) {
        events.push({
          type: 'STATE_CHANGED',
          fromState: from,
          toState: to,
          attempt: job.attempt,
          nodeIds: job.nodeIds,
          ...(to === 'QUEUED' ? { reason: 'PREEMPTED' } : {}),
        });
        from = to;
      }
      state = 'QUEUED';
    } else if (path.length > 0) {
      touched = true;
      let reason: string | null = null;
      const retried =
        path[path.length - 1] === 'FAILED' && job.retryPolicy
          ? decideExitRetry(
              job.retryPolicy,
              { attempt: job.attempt, retriesForgiven: job.retriesForgiven, exitCode: report.exitCode, reason: report.reason },
              random,
            )
          : { kind: 'end' as const };
      if (retried.kind === 'retry') {
        // SCHEDULED|RUNNING -> QUEUED, as for a lost attempt. The gang's other ranks are stopped
        // (their KILLs are in killNodeIds) and given back now, like a lost attempt's: once the job is
        // placed again their reports are stale, and nothing else would release them.
        path = [...path.slice(0, -1), 'QUEUED'];
        retry = { delayMs: retried.delayMs };
        reason = `EXIT_CODE_${report.exitCode}; retry in ${retried.delayMs} ms`;
        for (const other of ranks) {
          if (other.released) continue;
          const before = written.get(other.nodeId);
          written.set(other.nodeId, { nodeId: other.nodeId, state: other.state, exitCode: before?.exitCode ?? null, release: true });
          other.released = true;
        }
      }
      const final = path[path.length - 1];
      if (path.includes('RUNNING') && !job.started) start = true;
      if (isTerminal(final)) {
        reason = report.reason ?? (final === 'FAILED' ? `EXIT_CODE_${report.exitCode ?? 'UNKNOWN'}` : final === 'CANCELLED' ? 'CANCELLED' : null);
        end = { exitCode: report.exitCode ?? null, reason };
      }
      let from = state;
      for (const to of path) {
        const e: FoldedEvent = { type: 'STATE_CHANGED', fromState: from, toState: to, attempt: job.attempt, nodeIds: job.nodeIds };
        if ((isTerminal(to) || to === 'QUEUED') && reason) e.reason = reason;
        events.push(e);
        from = to;
      }
      state = final;
    }
    outcomes.push(decision.path.length > 0 || released ? 'applied' : 'noop');
  }
  return { outcomes, touched, state, start, end, retry, preempted, events, ranks: [...written.values()], kills };
}
