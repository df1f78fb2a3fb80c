import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Counter } from 'prom-client';
import { JobLifecycleMessage, JobReportMessage, KillCommand, TOPICS, JOB_ID_PATTERN } from '@gantry/contracts';
import { JobState, decideReport, isTerminal } from '@gantry/domain';
import type { IHeaders } from 'kafkajs';
import { withConsumerSpan } from '@gantry/messaging';
import {
  JobChanges, NewJobEvent, OutboxMessage, Sql, appendJobEvents, casUpdateJob, enqueueOutbox, findJobWithRanks, inTransaction,
  isPermanentDataError, releaseRank, setRankState,
} from '@gantry/persistence';

export type ReportOutcome = 'applied' | 'noop' | 'stale' | 'rejected' | 'unknown-job';

const reportsApplied = new Counter({ name: 'gantry_job_reports_total', help: 'Agent job reports by outcome', labelNames: ['outcome'] });

function kill(nodeId: string, jobId: string, attempt: number, reason: string): OutboxMessage {
  const cmd: KillCommand = { type: 'KILL', nodeId, jobId, attempt, reason };
  return { topic: TOPICS.agentCommands, key: nodeId, value: cmd };
}

function lifecycle(type: JobLifecycleMessage['type'], jobId: string, now: Date): OutboxMessage {
  const msg: JobLifecycleMessage = { type, jobId, at: now.getTime() };
  return { topic: TOPICS.jobLifecycle, key: jobId, value: msg };
}

/** What became of one report of a batch: its outcome, or the error the database refused it with for good. */
export type BatchReportResult = { outcome: ReportOutcome } | { error: Error };

/** Reports applied per transaction at most, so that no transaction holds its row locks for long. */
const MAX_REPORTS_PER_TRANSACTION = 100;

/**
 * Applies agent reports to Postgres through the domain's decision: fenced by attempt number,
 * terminal states absorb, each state change is one event, capacity is released exactly once, and
 * the job's version compare-and-set makes racing writers retry instead of both winning.
 */
@Injectable()
export class JobReportApplier {
  constructor(@Inject(DataSource) private readonly ds: DataSource) {}

  async apply(report: JobReportMessage): Promise<ReportOutcome> {
    const [result] = await this.applyBatch([{ value: report }]);
    if ('error' in result) throw result.error;
    return result.outcome;
  }

  /**
   * Applies one partition's reports, in order, in as few transactions as MAX_REPORTS_PER_TRANSACTION
   * allows: one commit (one WAL flush) for many reports instead of one each. Each report runs under
   * a savepoint, so a lost compare-and-set retries only that report, with fresh state, and a report
   * the database can never accept (a data error) is returned as an error without undoing the others.
   * Any other error rolls back the transaction and is thrown: the batch is retried, and reapplying
   * a report is idempotent.
   */
  async applyBatch(items: Array<{ value: JobReportMessage; headers?: IHeaders }>): Promise<BatchReportResult[]> {
    const results: BatchReportResult[] = [];
    for (let i = 0; i < items.length; i += MAX_REPORTS_PER_TRANSACTION) {
      const chunk = items.slice(i, i + MAX_REPORTS_PER_TRANSACTION);
      const done = await inTransaction(this.ds, async (sql) => {
        const out: BatchReportResult[] = [];
        for (const { value: r, headers } of chunk) {
          out.push(await withConsumerSpan(headers, 'apply job report', { 'gantry.job_id': r.jobId, 'gantry.attempt': r.attempt }, () => this.applyUnderSavepoint(sql, r)));
        }
        return out;
      });
      for (const d of done) if ('outcome' in d) reportsApplied.inc({ outcome: d.outcome });
      results.push(...done);
    }
    return results;
  }

  private async applyUnderSavepoint(sql: Sql, report: JobReportMessage): Promise<BatchReportResult> {
    for (let attempt = 0; ; attempt++) {
      await sql.rows('SAVEPOINT report');
      try {
        const outcome = await this.applyOnce(sql, report);
        await sql.rows('RELEASE SAVEPOINT report');
        return { outcome };
      } catch (e) {
        await sql.rows('ROLLBACK TO SAVEPOINT report');
        await sql.rows('RELEASE SAVEPOINT report');
        if ((e as Error).name === 'ConcurrentUpdateError' && attempt < 10) continue;
        if (isPermanentDataError(e)) return { error: e as Error };
        throw e;
      }
    }
  }

  private async applyOnce(sql: Sql, report: JobReportMessage): Promise<ReportOutcome> {
    const now = new Date();
    const found = JOB_ID_PATTERN.test(report.jobId) ? await findJobWithRanks(sql, report.jobId) : null;
    if (!found) {
      // Nothing here wants this work: an orphan. Stop it if it runs.
      if (report.state === 'RUNNING') await enqueueOutbox(sql, [kill(report.nodeId, report.jobId, report.attempt, 'UNKNOWN_JOB')]);
      return 'unknown-job';
    }
    const { job, ranks } = found;
    const decision = decideReport({ state: job.state, attempt: job.attempt }, ranks, report);

    if (decision.kind === 'stale') {
      if (decision.killAttempt) await enqueueOutbox(sql, [kill(report.nodeId, job.id, report.attempt, 'STALE_ATTEMPT')]);
      return 'stale';
    }
    if (decision.kind === 'rejected') {
      const { firstSeq } = await casUpdateJob(sql, job.id, job.version, {}, 1, now);
      await appendJobEvents(sql, job.id, firstSeq, [
        { type: 'REPORT_REJECTED', at: now, attempt: report.attempt, nodeIds: [report.nodeId], reason: `${decision.reason}: ${report.state} while ${job.state}` },
      ]);
      return 'rejected';
    }

    const rank = ranks.find((r) => r.nodeId === report.nodeId)!;
    const rankChanged = rank.state !== decision.rankState;
    if (rankChanged) {
      await setRankState(sql, job.id, job.attempt, report.nodeId, decision.rankState, report.exitCode ?? null);
    }
    const released = decision.releaseRank && (await releaseRank(sql, job.id, job.attempt, report.nodeId, now));
    const outbox: OutboxMessage[] = decision.killNodeIds.map((n) => kill(n, job.id, job.attempt, 'GANG_ENDED'));

    if (decision.path.length === 0 && (rankChanged || released)) {
      // Ranks of one job change only under the job's compare-and-set, so two ranks reported at once
      // cannot each miss the other's end (which would leave a gang RUNNING forever).
      await casUpdateJob(sql, job.id, job.version, {}, 0, now);
    }
    if (decision.path.length > 0) {
      const final = decision.path[decision.path.length - 1];
      const changes: JobChanges = { state: final };
      if (decision.path.includes('RUNNING') && !job.startedAt) changes.startedAt = now;
      if (isTerminal(final)) {
        changes.finishedAt = now;
        changes.exitCode = report.exitCode ?? null;
        changes.reason = report.reason ?? (final === 'FAILED' ? `EXIT_CODE_${report.exitCode ?? 'UNKNOWN'}` : final === 'CANCELLED' ? 'CANCELLED' : null);
      }
      const { firstSeq } = await casUpdateJob(sql, job.id, job.version, changes, decision.path.length, now);
      let from: JobState = job.state;
      const events: NewJobEvent[] = decision.path.map((to) => {
        const e: NewJobEvent = { type: 'STATE_CHANGED', at: now, fromState: from, toState: to, attempt: job.attempt, nodeIds: job.nodeIds };
        if (isTerminal(to) && changes.reason) e.reason = changes.reason;
        from = to;
        return e;
      });
      await appendJobEvents(sql, job.id, firstSeq, events);
    }
    // The lifecycle topic only wakes the scheduler, and only freed capacity can let it place more.
    if (released) outbox.push(lifecycle('CAPACITY_RELEASED', job.id, now));
    await enqueueOutbox(sql, outbox);
    return decision.path.length > 0 || released ? 'applied' : 'noop';
  }
}
