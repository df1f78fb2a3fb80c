import { RankState } from './attempt-outcome';
import { JobState, isTerminal } from './job-state';
import { AgentReport, RankSnapshot, decideReport } from './job-report-decision';

/** A job as read before its reports are applied, with the ranks of its current attempt. */
export interface ReportedJob {
  state: JobState;
  attempt: number;
  /** startedAt is already set. */
  started: boolean;
  /** The current attempt's nodes, by rank (carried on STATE_CHANGED events). */
  nodeIds: readonly string[];
  ranks: readonly RankSnapshot[];
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
  /** In order; seqs follow the job's last one. */
  events: FoldedEvent[];
  /** Ranks whose row changes, at most one entry per node. */
  ranks: RankWrite[];
  /** KILLs to send: stale attempts still running, and a gang's live ranks once the job ended. */
  kills: Array<{ nodeId: string; attempt: number; reason: 'STALE_ATTEMPT' | 'GANG_ENDED' }>;
}

/**
 * Applies a node's (or several nodes') reports for one job in order, in memory, as if each had been
 * committed before the next was decided (decideReport for each against the state the previous left).
 * The reconciler writes the result in one statement; a report the next one depends on is never lost
 * between them because they commit together or not at all.
 */
export function foldReports(job: ReportedJob, reports: readonly JobReport[]): FoldedReports {
  let state = job.state;
  let start = false;
  let end: FoldedReports['end'] = null;
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
        type: 'REPORT_REJECTED', attempt: report.attempt, nodeIds: [report.nodeId],
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
    for (const nodeId of decision.killNodeIds) kills.push({ nodeId, attempt: job.attempt, reason: 'GANG_ENDED' });

    if (decision.path.length > 0) {
      touched = true;
      const final = decision.path[decision.path.length - 1];
      if (decision.path.includes('RUNNING') && !job.started) start = true;
      let reason: string | null = null;
      if (isTerminal(final)) {
        reason = report.reason ?? (final === 'FAILED' ? `EXIT_CODE_${report.exitCode ?? 'UNKNOWN'}` : final === 'CANCELLED' ? 'CANCELLED' : null);
        end = { exitCode: report.exitCode ?? null, reason };
      }
      let from = state;
      for (const to of decision.path) {
        const e: FoldedEvent = { type: 'STATE_CHANGED', fromState: from, toState: to, attempt: job.attempt, nodeIds: job.nodeIds };
        if (isTerminal(to) && reason) e.reason = reason;
        events.push(e);
        from = to;
      }
      state = final;
    }
    outcomes.push(decision.path.length > 0 || released ? 'applied' : 'noop');
  }
  return { outcomes, touched, state, start, end, events, ranks: [...written.values()], kills };
}

