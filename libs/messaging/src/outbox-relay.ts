import { Message, Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { inTransaction, onOutboxCommitted, prepared } from '@gantry/persistence';

export interface OutboxRelayOptions {
  dataSource: DataSource;
  producer: Producer;
  /** Rows published per transaction. */
  batchSize?: number;
  /** Poll interval (ms) for rows this process did not write (another process's, or left by a crash). */
  pollIntervalMs?: number;
  logger: { warn(obj: object, msg: string): void };
  onPublished?: (count: number) => void;
}

const CLAIM_ROWS = prepared(`DELETE FROM outbox WHERE id IN (SELECT id FROM outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
  RETURNING id, topic, key, value, headers`);

interface OutboxRow {
  id: string;
  topic: string;
  key: string | null;
  value: string;
  headers: Record<string, string>;
}

/**
 * Publishes outbox rows to Kafka and deletes them, so a state change and its messages are never
 * half-written (no dual write). Any number of replicas may run: rows are claimed with SKIP LOCKED.
 * Delivery is at-least-once (a crash after the send and before the commit re-sends); every consumer
 * is idempotent. Woken in-process when this process commits outbox rows (see onOutboxCommitted);
 * a poll finds everything else. Wake-ups during a publish coalesce into one more round.
 */
export class OutboxRelay {
  private running = false;
  private woken = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly opts: OutboxRelayOptions) {}

  async start(): Promise<void> {
    this.running = true;
    this.unsubscribe = onOutboxCommitted(() => {
      this.woken = true;
      this.wake?.();
    });
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    const poll = this.opts.pollIntervalMs ?? 250;
    while (this.running) {
      this.woken = false;
      let published = 0;
      try {
        published = await this.publishBatch();
      } catch (err) {
        this.opts.logger.warn({ err }, 'outbox publish failed; retrying');
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (published > 0 || this.woken) continue; // more may be waiting
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, poll);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  /**
   * Publishes one batch; returns how many rows went out. The rows are claimed and deleted in one
   * statement, and the deletion commits only after Kafka acknowledged them: three round trips.
   */
  async publishBatch(): Promise<number> {
    return inTransaction(this.opts.dataSource, async (sql) => {
      const rows = await sql.rows<OutboxRow>(CLAIM_ROWS, [this.opts.batchSize ?? 500]);
      if (rows.length === 0) return 0;
      rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1)); // RETURNING has no order; the table's is the one to keep
      const byTopic = new Map<string, Message[]>();
      for (const r of rows) {
        const list = byTopic.get(r.topic) ?? [];
        list.push({ key: r.key, value: r.value, headers: r.headers });
        byTopic.set(r.topic, list);
      }
      await this.opts.producer.sendBatch({ topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
      this.opts.onPublished?.(rows.length);
      return rows.length;
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.wake?.();
    await this.loop;
  }
}
