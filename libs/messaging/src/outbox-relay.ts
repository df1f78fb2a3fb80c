import { Client } from 'pg';
import { Message, Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { OUTBOX_CHANNEL, inTransaction } from '@gantry/persistence';

export interface OutboxRelayOptions {
  dataSource: DataSource;
  databaseUrl: string;
  producer: Producer;
  /** Rows published per transaction. */
  batchSize?: number;
  /** Fallback poll interval (ms) when a NOTIFY is missed (e.g. while the LISTEN connection reconnects). */
  pollIntervalMs?: number;
  logger: { warn(obj: object, msg: string): void };
  onPublished?: (count: number) => void;
}

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
 * is idempotent. Woken by NOTIFY on commit, with a slow poll as the safety net.
 */
export class OutboxRelay {
  private listener: Client | null = null;
  private running = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;

  constructor(private readonly opts: OutboxRelayOptions) {}

  async start(): Promise<void> {
    this.running = true;
    await this.connectListener();
    this.loop = this.run();
  }

  private async connectListener(): Promise<void> {
    const client = new Client({ connectionString: this.opts.databaseUrl, application_name: 'gantry-outbox-listener' });
    client.on('notification', () => this.wake?.());
    client.on('error', (err) => {
      this.opts.logger.warn({ err }, 'outbox LISTEN connection lost; polling until it is back');
      this.listener = null;
      setTimeout(() => this.running && this.connectListener().catch(() => undefined), 1_000);
    });
    await client.connect();
    await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    this.listener = client;
  }

  private async run(): Promise<void> {
    const poll = this.opts.pollIntervalMs ?? 500;
    while (this.running) {
      let published = 0;
      try {
        published = await this.publishBatch();
      } catch (err) {
        this.opts.logger.warn({ err }, 'outbox publish failed; retrying');
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (published > 0) continue; // more may be waiting
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

  /** Publishes one batch; returns how many rows went out. */
  async publishBatch(): Promise<number> {
    return inTransaction(this.opts.dataSource, async (sql) => {
      const rows = await sql.rows<OutboxRow>(
        `SELECT id, topic, key, value, headers FROM outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.opts.batchSize ?? 500],
      );
      if (rows.length === 0) return 0;
      const byTopic = new Map<string, Message[]>();
      for (const r of rows) {
        const list = byTopic.get(r.topic) ?? [];
        list.push({ key: r.key, value: r.value, headers: r.headers });
        byTopic.set(r.topic, list);
      }
      await this.opts.producer.sendBatch({ topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
      await sql.rows(`DELETE FROM outbox WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)]);
      this.opts.onPublished?.(rows.length);
      return rows.length;
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    await this.listener?.end().catch(() => undefined);
  }
}
