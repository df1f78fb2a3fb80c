/**
 * Watches gantry.job-reports.v1 from the bench's own consumer group and remembers, per job, when its
 * agent said the process started (RUNNING) and ended (a terminal state): the `at` of the report,
 * the agent's clock, which on one host is the bench's clock. The bench's own reading delay does
 * not count.
 */
import { TOPICS } from '@gantry/contracts';
import { KafkaSecurity } from '@gantry/messaging';
import { TopicWatch } from '../dispatch/topic-watch';

export interface JobTimes {
  startedAtMs: number | null;
  endedAtMs: number | null;
  state: string | null;
}

export class ReportWatch {
  readonly jobs = new Map<string, JobTimes>();
  private readonly watch: TopicWatch;

  constructor(brokers: string, security: KafkaSecurity, groupId: string) {
    this.watch = new TopicWatch(brokers, security, groupId, TOPICS.jobReports, (value) => this.record(value));
  }

  start(): Promise<void> {
    return this.watch.start();
  }

  /** True once the group has joined and fetched: reports sent from now on will be seen. */
  get positioned(): boolean {
    return this.watch.positioned;
  }

  private record(value: Buffer | null): void {
    if (!value) return;
    let r: { jobId?: unknown; state?: unknown; at?: unknown };
    try {
      r = JSON.parse(value.toString());
    } catch {
      return;
    }
    if (typeof r.jobId !== 'string' || typeof r.at !== 'number' || typeof r.state !== 'string') return;
    const t = this.jobs.get(r.jobId) ?? { startedAtMs: null, endedAtMs: null, state: null };
    if (r.state === 'RUNNING') t.startedAtMs = t.startedAtMs === null ? r.at : Math.min(t.startedAtMs, r.at);
    else {
      t.endedAtMs = r.at;
      t.state = r.state;
    }
    this.jobs.set(r.jobId, t);
  }

  startedAt(jobId: string): number | null {
    return this.jobs.get(jobId)?.startedAtMs ?? null;
  }

  endedAt(jobId: string): number | null {
    return this.jobs.get(jobId)?.endedAtMs ?? null;
  }

  /** Jobs of `ids` that have ended. */
  countEnded(ids: readonly string[]): number {
    let n = 0;
    for (const id of ids) if (this.endedAt(id) !== null) n++;
    return n;
  }

  stop(): Promise<void> {
    return this.watch.stop();
  }
}
