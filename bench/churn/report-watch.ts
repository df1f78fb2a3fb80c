/**
 * Watches gantry.job-reports.v1 from the bench's own consumer group and remembers, per job, when its
 * agent said the process started (RUNNING) and ended (a terminal state): the `at` of the report,
 * the agent's clock, which on one host is the bench's clock. The bench's own reading delay does
 * not count.
 */
import type { Consumer } from 'kafkajs';
import { TOPICS } from '@gantry/contracts';
import { KafkaSecurity, createKafka } from '@gantry/messaging';

export interface JobTimes {
  startedAtMs: number | null;
  endedAtMs: number | null;
  state: string | null;
}

export class ReportWatch {
  readonly jobs = new Map<string, JobTimes>();
  private readonly consumer: Consumer;
  private joined = false;
  private fetched = false;

  constructor(brokers: string, security: KafkaSecurity, groupId: string) {
    const kafka = createKafka({ brokers: [brokers], clientId: 'bench-churn', security });
    // The broker answers a fetch as soon as a record arrives; the wait only paces empty polls.
    this.consumer = kafka.rawConsumer({ groupId, maxWaitTimeInMs: 500 });
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => (this.joined = true));
    this.consumer.on(this.consumer.events.FETCH, () => {
      if (this.joined) this.fetched = true;
    });
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: TOPICS.jobReports, fromBeginning: false });
    await this.consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) this.record(m.value);
      },
    });
  }

  /** True once the group has joined and fetched: reports sent from now on will be seen. */
  get positioned(): boolean {
    return this.joined && this.fetched;
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

  async stop(): Promise<void> {
    await this.consumer.disconnect().catch(() => undefined);
  }
}
