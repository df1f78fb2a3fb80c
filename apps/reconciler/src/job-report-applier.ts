import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Counter, Histogram } from 'prom-client';
import { JobReportMessage, KillCommand, TOPICS, JOB_ID_PATTERN } from '@gantry/contracts';
import { LoadGap, ReportOutcome, foldReports, loadGapMs } from '@gantry/domain';
import type { MessageHeaders, WakeUpSender } from '@gantry/messaging';
import {
  ConcurrentUpdateError,
  JobReportWrite,
  MicroBatcher,
  ReportMessage,
  autocommit,
  findJobsWithRanks,
  isPermanentDataError,
  writeJobReports,
} from '@gantry/persistence';
import { CONFIG, SCHEDULER_WAKE } from '@gantry/runtime';
import { ReconcilerEnv } from './config';

export type { ReportOutcome } from '@gantry/domain';

const reportsApplied = new Counter({ name: 'gantry_job_reports_total', help: 'Agent job reports by outcome', labelNames: ['outcome'] });
const reportsPerWrite = new Histogram({
  name: 'gantry_job_reports_per_write',
  help: 'Reports applied by one write statement',
  buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
});

/** What became of one report of a batch: its outcome, or the error the database refused it with for good. */
export type BatchReportResult = { outcome: ReportOutcome } | { error: Error };

/** Reports written per statement at most, so that no statement holds its row locks for long. */
const MAX_REPORTS_PER_WRITE = 250;
/** Rounds of read, decide, write for jobs whose compare-and-set keeps losing before the batch is retried whole. */
const MAX_ROUNDS = 10;

function kill(nodeId: string, jobId: string, attempt: number, reason: string): KillCommand {
  return { type: 'KILL', nodeId, jobId, attempt, issuedAt: Date.now(), reason };
}

/**
 * Applies agent reports to Postgres through the domain's decision: fenced by attempt number,
 * terminal states absorb, each state change is one event, capacity is released exactly once, and
 * the job's version compare-and-set makes racing writers retry instead of both winning.
 *
 * A batch costs two round trips, whatever its size: one read of every job it names (with its
 * ranks), then one statement writing what the reports did (foldReports, per job, in report order).
 * A job another writer changed in between is left out of that statement and goes round again.
 */
@Injectable()
export class JobReportApplier {
  /**
   * Group commit across partitions: the batches of every partition consumed at once that arrive
   * while a write is in flight go together in the next one. At 1,000 reports/s over six partitions
   * each fetch holds a handful of reports, and the write's fixed cost (planning, a commit) would be
   * paid per handful. Under a steady stream the next write also waits a gap that grows with the
   * last one (loadGapMs), so the batches grow with the load instead of the writes' number.
   */
  private readonly writes: MicroBatcher<JobReportMessage[], BatchReportResult[]>;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(SCHEDULER_WAKE) private readonly schedulerWake: WakeUpSender,
    @Inject(CONFIG) config: Pick<ReconcilerEnv, 'GANTRY_REPORT_GAP_PER_REPORT_MS' | 'GANTRY_REPORT_MAX_GAP_MS'>,
  ) {
    const gap: LoadGap = { perItemMs: config.GANTRY_REPORT_GAP_PER_REPORT_MS, maxMs: config.GANTRY_REPORT_MAX_GAP_MS };
    this.writes = new MicroBatcher({
      maxBatch: 64,
      maxInFlight: 1,
      // Under a steady stream of reports, fewer and larger writes (see GANTRY_REPORT_MAX_GAP_MS).
      gapAfterMs: (batches) =>
        loadGapMs(
          batches.reduce((n, b) => n + b.length, 0),
          gap,
        ),
      run: async (batches) => {
        const results = await this.applyAll(batches.flat());
        let at = 0;
        return batches.map((b) => results.slice(at, (at += b.length)));
      },
    });
  }

  async apply(report: JobReportMessage): Promise<ReportOutcome> {
    const [result] = await this.applyBatch([{ value: report }]);
    if ('error' in result) throw result.error;
    return result.outcome;
  }

  /**
   * Applies one partition's reports; reports of one job keep their order. If the database refuses
   * a write for good (a data error), the batch's reports are applied one by one instead, so that
   * the one it refuses is returned as an error and the others stand. Any other error is thrown:
   * the batch is retried, and reapplying a report is idempotent.
   */
  async applyBatch(items: Array<{ value: JobReportMessage; headers?: MessageHeaders }>): Promise<BatchReportResult[]> {
    return this.writes.submit(items.map((it) => it.value));
  }

  private async applyAll(reports: JobReportMessage[]): Promise<BatchReportResult[]> {
    const results: BatchReportResult[] = [];
    for (let i = 0; i < reports.length; i += MAX_REPORTS_PER_WRITE) {
      const chunk = reports.slice(i, i + MAX_REPORTS_PER_WRITE);
      let done: BatchReportResult[];
      try {
        done = (await this.applyTogether(chunk)).map((outcome) => ({ outcome }));
      } catch (e) {
        if (!isPermanentDataError(e)) throw e;
        done = [];
        for (const r of chunk) {
          try {
            done.push({ outcome: (await this.applyTogether([r]))[0] });
          } catch (err) {
            if (!isPermanentDataError(err)) throw err;
            done.push({ error: err as Error });
          }
        }
      }
      for (const d of done) if ('outcome' in d) reportsApplied.inc({ outcome: d.outcome });
      results.push(...done);
    }
    return results;
  }

  /** Outcomes in report order. */
  private async applyTogether(reports: JobReportMessage[]): Promise<ReportOutcome[]> {
    const outcomes: ReportOutcome[] = new Array(reports.length);
    let pending = new Map<string, number[]>(); // job id -> its reports, in order
    reports.forEach((r, i) => {
      const jobId = r.jobId.toLowerCase();
      pending.set(jobId, [...(pending.get(jobId) ?? []), i]);
    });
    const sql = autocommit(this.ds);
    for (let round = 0; pending.size > 0; round++) {
      if (round >= MAX_ROUNDS) throw new ConcurrentUpdateError(`jobs ${[...pending.keys()].join(', ')}`);
      const found = await findJobsWithRanks(
        sql,
        [...pending.keys()].filter((id) => JOB_ID_PATTERN.test(id)),
      );
      const now = new Date();
      const writes: JobReportWrite[] = [];
      const messages: ReportMessage[] = [];
      const decided = new Map<string, ReportOutcome[]>();
      for (const [jobId, indexes] of pending) {
        const f = found.get(jobId);
        if (!f) {
          // Nothing here wants this work: an orphan. Stop it if it runs.
          decided.set(
            jobId,
            indexes.map(() => 'unknown-job'),
          );
          for (const r of indexes.map((i) => reports[i])) {
            if (r.state === 'RUNNING') messages.push(command(null, kill(r.nodeId, r.jobId, r.attempt, 'UNKNOWN_JOB')));
          }
          continue;
        }
        const { job, ranks } = f;
        const folded = foldReports(
          {
            state: job.state,
            attempt: job.attempt,
            started: job.startedAt !== null,
            nodeIds: job.nodeIds,
            ranks,
            retriesForgiven: job.retriesForgiven,
            preempted: job.preemptedAttempt === job.attempt && !job.cancelRequested,
            retryPolicy: {
              maxRetries: job.maxRetries,
              backoffSeconds: job.backoffSeconds,
              maxBackoffSeconds: job.maxBackoffSeconds,
              retryOnExitCodes: job.retryOnExitCodes,
            },
          },
          indexes.map((i) => reports[i]),
          Math.random,
        );
        decided.set(jobId, folded.outcomes);
        // KILLs of stale attempts go out whatever the job does next; a gang's, only with the job's write.
        const kills = folded.kills.map((k) => command(folded.touched ? job.id : null, kill(k.nodeId, job.id, k.attempt, k.reason)));
        messages.push(...kills);
        if (!folded.touched) continue;
        writes.push({
          jobId: job.id,
          expectedVersion: job.version,
          lastEventSeq: job.lastEventSeq,
          attempt: job.attempt,
          state: folded.state,
          start: folded.start,
          end: folded.end,
          events: folded.events,
          ranks: folded.ranks,
          retryAt: folded.retry ? new Date(now.getTime() + folded.retry.delayMs) : null,
          preempted: folded.preempted,
        });
      }
      const { written, freed } = await writeJobReports(sql, writes, messages, now);
      // Only freed capacity can let the scheduler place more.
      if (freed) this.schedulerWake.signal('CAPACITY_RELEASED');
      reportsPerWrite.observe([...pending.values()].reduce((n, idx) => n + idx.length, 0));

      const lost = new Set(writes.filter((w) => !written.has(w.jobId)).map((w) => w.jobId));
      const next = new Map<string, number[]>();
      for (const [jobId, jobOutcomes] of decided) {
        if (lost.has(jobId)) next.set(jobId, pending.get(jobId)!);
        else pending.get(jobId)!.forEach((i, n) => (outcomes[i] = jobOutcomes[n]));
      }
      pending = next;
    }
    return outcomes;
  }
}

function command(jobId: string | null, cmd: KillCommand): ReportMessage {
  return { jobId, topic: TOPICS.agentCommands, key: cmd.nodeId, value: cmd };
}
