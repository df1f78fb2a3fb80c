/**
 * Watches gantry.agent-commands.v1 from the bench's own consumer group and remembers, per job, when
 * each gang rank's first RUN was published. "Published" is the record's Kafka timestamp: the
 * producer's CreateTime, which kafkajs sets when the outbox relay sends the command, right after
 * reading it from the outbox. The bench's own reading delay therefore does not count.
 */
import type { Consumer } from 'kafkajs';
import { TOPICS } from '@gantry/contracts';
import { KafkaSecurity, createKafka } from '@gantry/messaging';

export interface JobDispatch {
  /** Lowest attempt seen: a re-sent or re-placed RUN never makes dispatch look later than it was. */
  attempt: number;
  gangSize: number;
  /** First RUN timestamp (ms since the epoch) per rank of that attempt. */
  ranks: Map<number, number>;
}

export class CommandWatch {
  readonly jobs = new Map<string, JobDispatch>();
  /** Bench receive time minus Kafka timestamp, per RUN record: how far behind the watch itself ran. */
  readonly receiveDelaysMs: number[] = [];
  runRecords = 0;
  private readonly consumer: Consumer;
  private joined = false;
  private fetched = false;

  constructor(brokers: string, security: KafkaSecurity, groupId: string) {
    const kafka = createKafka({ brokers: [brokers], clientId: 'bench-dispatch', security });
    // The broker answers a fetch as soon as a record arrives; the wait only paces empty polls.
    this.consumer = kafka.rawConsumer({ groupId, maxWaitTimeInMs: 500 });
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => (this.joined = true));
    // The first fetch after joining resolves the group's starting offsets (latest: fromBeginning is false).
    this.consumer.on(this.consumer.events.FETCH, () => {
      if (this.joined) this.fetched = true;
    });
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: TOPICS.agentCommands, fromBeginning: false });
    await this.consumer.run({
      eachBatch: async ({ batch }) => {
        const now = Date.now();
        for (const m of batch.messages) this.record(m.value, Number(m.timestamp), now);
      },
    });
  }

  /** True once the group has joined and fetched: commands published from now on will be seen. */
  get positioned(): boolean {
    return this.joined && this.fetched;
  }

  private record(value: Buffer | null, ts: number, now: number): void {
    if (!value) return;
    let c: { type?: string; jobId?: string; attempt?: number; gang?: { size?: number; rank?: number } };
    try {
      c = JSON.parse(value.toString());
    } catch {
      return;
    }
    if (c.type !== 'RUN' || typeof c.jobId !== 'string' || typeof c.attempt !== 'number') return;
    this.runRecords++;
    this.receiveDelaysMs.push(now - ts);
    const rank = c.gang?.rank ?? 0;
    const size = c.gang?.size ?? 1;
    let d = this.jobs.get(c.jobId);
    if (!d || c.attempt < d.attempt) {
      d = { attempt: c.attempt, gangSize: size, ranks: new Map() };
      this.jobs.set(c.jobId, d);
    } else if (c.attempt > d.attempt) {
      return;
    }
    const seen = d.ranks.get(rank);
    if (seen === undefined || ts < seen) d.ranks.set(rank, ts);
  }

  /** When the job's last rank was first published; null until every rank has been. */
  dispatchedAt(jobId: string): number | null {
    const d = this.jobs.get(jobId);
    if (!d || d.ranks.size < d.gangSize) return null;
    return Math.max(...d.ranks.values());
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect().catch(() => undefined);
  }
}
