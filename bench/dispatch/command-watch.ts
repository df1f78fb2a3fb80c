/**
 * Watches gantry.agent-commands.v1 from the bench's own consumer group and remembers, per job, when
 * each gang rank's first RUN was published. "Published" is the record's Kafka timestamp: the
 * producer's CreateTime, which kafkajs sets when the outbox relay sends the command, right after
 * reading it from the outbox. The bench's own reading delay therefore does not count.
 */
import { TOPICS } from '@gantry/contracts';
import { KafkaSecurity } from '@gantry/messaging';
import { TopicWatch } from './topic-watch';

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
  private readonly watch: TopicWatch;

  constructor(brokers: string, security: KafkaSecurity, groupId: string) {
    this.watch = new TopicWatch(brokers, security, groupId, TOPICS.agentCommands, (value, ts, now) => this.record(value, ts, now));
  }

  start(): Promise<void> {
    return this.watch.start();
  }

  /** True once the group has joined and fetched: commands published from now on will be seen. */
  get positioned(): boolean {
    return this.watch.positioned;
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

  stop(): Promise<void> {
    return this.watch.stop();
  }
}
