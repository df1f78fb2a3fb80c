import { DataSource } from 'typeorm';
import {
  OutboxVacuumSchedule,
  Sql,
  autocommit,
  claimOutboxRows,
  deleteClaimedOutboxRows,
  inTransaction,
  onOutboxCommitted,
  vacuumOutbox,
} from '@gantry/persistence';
import { DeadLetter, DeadLetterPublisher } from './dead-letter';
import { isTransientFailure } from './failure-kind';
import { MessageProducer } from './kafka-client';
import { OutgoingMessage, messageBytes } from './message';

/** An outbox row as claimed. */
export interface OutboxRow {
  id: string;
  topic: string;
  key: string | null;
  value: string;
  headers: Record<string, string>;
}

/** A message bound for a topic. */
export interface TopicMessage {
  topic: string;
  message: OutgoingMessage;
}

/**
 * Rows of a pseudo-topic that stand for messages built at publish time rather than written whole
 * (a gang's RUNs: one row per placed job instead of one RUN per rank, each carrying the job's
 * command and env). `prepare` reads what the rows need, once per claim; the function it returns
 * yields each row's messages lazily, so that a 1,024-rank gang is never in memory at once.
 */
export interface OutboxExpander {
  readonly source: string;
  prepare(sql: Sql, rows: OutboxRow[]): Promise<(row: OutboxRow) => Iterable<TopicMessage>>;
}

/** Signs the messages of one topic (the agent commands: contract 4.1) as they are sent. */
export interface MessageSigner {
  readonly topic: string;
  readonly header: string;
  sign(value: Buffer | string): string;
}

export interface OutboxRelayOptions {
  dataSource: DataSource;
  producer: MessageProducer;
  deadLetters: DeadLetterPublisher;
  /** Rows claimed per transaction. */
  batchSize?: number;
  /** Poll interval (ms) for rows this process did not write (another process's, or left by a crash). */
  pollIntervalMs?: number;
  expanders?: OutboxExpander[];
  signer?: MessageSigner;
  logger: { warn(obj: object, msg: string): void };
  onPublished?: (count: number) => void;
  /** Vacuum the outbox after this many rows published (default 2,000; 0: never). See vacuumOutbox. */
  vacuumEveryRows?: number;
  onVacuumed?: () => void;
}

/**
 * A message larger than this is never sent: it would be refused by the broker (message.max.bytes,
 * 1 MiB by default) and retried forever, blocking every row behind it. It is parked instead.
 */
export const MAX_MESSAGE_BYTES = 900 * 1024;
/** Messages per produce request by size: well under the broker's limits per request and per partition batch. */
export const MAX_REQUEST_BYTES = 768 * 1024;

/**
 * Publishes outbox rows to Kafka and deletes them, so a state change and its messages are never
 * half-written (no dual write). Any number of replicas may run: rows are claimed with SKIP LOCKED.
 * Delivery is at-least-once (a crash after the send and before the commit re-sends); every consumer
 * is idempotent. Woken in-process when this process commits outbox rows (see onOutboxCommitted);
 * a poll finds everything else. Wake-ups during a publish coalesce into one more round.
 *
 * Nothing it claims can stop it: messages go out in requests of at most MAX_REQUEST_BYTES, in row
 * order; a message over MAX_MESSAGE_BYTES, or one the broker refuses for good, is parked on the
 * dead-letter topic (cut to fit) and the rows behind it go on.
 */
export class OutboxRelay {
  private running = false;
  private woken = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly expanders: Map<string, OutboxExpander>;
  private readonly vacuums: OutboxVacuumSchedule;

  constructor(private readonly opts: OutboxRelayOptions) {
    this.expanders = new Map((opts.expanders ?? []).map((e) => [e.source, e]));
    this.vacuums = new OutboxVacuumSchedule(opts.vacuumEveryRows);
  }

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
      if (published > 0) await this.vacuumWhenDue(published);
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
   * Publishes one claim of rows; returns how many rows it took. The rows are claimed, published and
   * deleted in one transaction, so the deletion commits only after Kafka acknowledged their messages.
   */
  async publishBatch(): Promise<number> {
    return inTransaction(this.opts.dataSource, async (sql) => {
      const rows = await claimOutboxRows(sql, this.opts.batchSize ?? 500);
      if (rows.length === 0) return 0;
      const expand = new Map<string, (row: OutboxRow) => Iterable<TopicMessage>>();
      for (const [source, expander] of this.expanders) {
        const mine = rows.filter((r) => r.topic === source);
        if (mine.length > 0) expand.set(source, await expander.prepare(sql, mine));
      }
      const out = new RequestBuffer((batch) => this.send(batch));
      for (const row of rows) {
        const expansion = expand.get(row.topic);
        const messages = expansion ? expansion(row) : [{ topic: row.topic, message: { key: row.key, value: row.value, headers: row.headers } }];
        for (const m of messages) await out.add(this.signed(m));
      }
      await out.flush();
      await deleteClaimedOutboxRows(sql, rows);
      this.opts.onPublished?.(rows.length);
      return rows.length;
    });
  }

  /** Vacuums the table once enough rows went out since the last time; a failure only costs speed. */
  private async vacuumWhenDue(published: number): Promise<void> {
    if (!this.vacuums.due(published)) return;
    try {
      await vacuumOutbox(autocommit(this.opts.dataSource));
      this.opts.onVacuumed?.();
    } catch (err) {
      this.opts.logger.warn({ err }, 'outbox vacuum failed; claims slow down until the next');
    }
  }

  private signed(m: TopicMessage): TopicMessage {
    const s = this.opts.signer;
    if (!s || m.topic !== s.topic) return m;
    return { topic: m.topic, message: { ...m.message, headers: { ...m.message.headers, [s.header]: s.sign(m.message.value) } } };
  }

  /** One produce request; on a refusal that is not transient, the messages one by one, parking those refused. */
  private async send(batch: TopicMessage[]): Promise<void> {
    const parked: DeadLetter[] = [];
    const sendable = batch.filter((m) => {
      const bytes = messageBytes(m.message);
      if (bytes <= MAX_MESSAGE_BYTES) return true;
      parked.push(letter(m, `message of ${bytes} bytes exceeds the ${MAX_MESSAGE_BYTES}-byte limit`));
      return false;
    });
    try {
      if (sendable.length > 0) await this.opts.producer.sendBatch(byTopic(sendable));
    } catch (err) {
      if (isTransientFailure(err)) throw err;
      for (const m of sendable) {
        try {
          await this.opts.producer.send(m.topic, [m.message]);
        } catch (one) {
          if (isTransientFailure(one)) throw one;
          parked.push(letter(m, `refused by the broker: ${(one as Error).message}`));
        }
      }
    }
    if (parked.length > 0) {
      this.opts.logger.warn({ count: parked.length, reasons: parked.map((p) => p.reason).slice(0, 5) }, 'outbox messages parked on the dead-letter topic');
      await this.opts.deadLetters.publish(parked);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.wake?.();
    await this.loop;
  }
}

function letter(m: TopicMessage, reason: string): DeadLetter {
  return { sourceTopic: m.topic, partition: null, offset: null, key: m.message.key, value: m.message.value, reason };
}

function byTopic(batch: TopicMessage[]): Array<{ topic: string; messages: OutgoingMessage[] }> {
  const topics = new Map<string, OutgoingMessage[]>();
  for (const m of batch) {
    const list = topics.get(m.topic) ?? [];
    list.push(m.message);
    topics.set(m.topic, list);
  }
  return [...topics].map(([topic, messages]) => ({ topic, messages }));
}

/** Collects messages in order and sends them as requests of at most MAX_REQUEST_BYTES. */
class RequestBuffer {
  private batch: TopicMessage[] = [];
  private bytes = 0;

  constructor(private readonly send: (batch: TopicMessage[]) => Promise<void>) {}

  async add(m: TopicMessage): Promise<void> {
    const bytes = messageBytes(m.message);
    if (this.batch.length > 0 && this.bytes + bytes > MAX_REQUEST_BYTES) await this.flush();
    this.batch.push(m);
    this.bytes += bytes;
  }

  async flush(): Promise<void> {
    if (this.batch.length === 0) return;
    const batch = this.batch;
    this.batch = [];
    this.bytes = 0;
    await this.send(batch);
  }
}
