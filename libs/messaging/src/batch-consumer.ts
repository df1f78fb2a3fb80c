import { Consumer, EachBatchPayload, IHeaders, Kafka } from 'kafkajs';
import type { ParseResult } from '@gantry/contracts';
import { DeadLetter, DeadLetterPublisher } from './dead-letter';

export interface ConsumedMessage<T> {
  value: T;
  key: string | null;
  headers: IHeaders | undefined;
  partition: number;
  offset: string;
}

/** A message the handler can never process (bad reference, impossible request): dead-lettered, not retried. */
export class TerminalMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TerminalMessageError';
  }
}

export interface TerminalFailure<T> {
  item: ConsumedMessage<T>;
  error: Error;
}

export interface ConsumerLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface BatchConsumerOptions<T> {
  kafka: Kafka;
  groupId: string;
  topic: string;
  fromBeginning?: boolean;
  parse: (raw: Buffer | null) => ParseResult<T>;
  /**
   * Handles the valid messages of a batch, at most `maxItemsPerCall` at a time. Throw for a retryable
   * failure (those messages are retried with backoff, offsets uncommitted); return terminal failures
   * to dead-letter them.
   */
  handleBatch: (items: ConsumedMessage<T>[]) => Promise<TerminalFailure<T>[]>;
  deadLetters: DeadLetterPublisher;
  /** A second reader of a topic skips bad messages instead of dead-lettering them again. */
  skipDeadLetters?: boolean;
  partitionsConsumedConcurrently?: number;
  logger: ConsumerLogger;
  onBatchDone?: (stats: { size: number; deadLettered: number; partition: number; lag: number }) => void;
  /**
   * How long the group waits for a silent member before giving its partitions to others (10 s).
   * A replica killed with -9 holds its partitions this long, so it bounds that recovery; heartbeats
   * go every 3 s, also while a batch is retried.
   */
  sessionTimeoutMs?: number;
  /**
   * Messages per handleBatch call (500). A fetch can hold thousands; between calls the consumer
   * commits what is done and heartbeats, so a slow batch does not outlive the session timeout (the
   * group would evict the member, redeliver the batch to it, and evict it again).
   */
  maxItemsPerCall?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Offsets are committed at most this often (and when the consumer stops), not after every batch:
 * an OffsetCommit per batch doubled the broker's CPU per message when batches are small. A replica
 * that dies, or a partition that moves, redelivers up to this much; every consumer is idempotent.
 */
const COMMIT_INTERVAL_MS = 1_000;

/**
 * kafkajs `eachBatch` with the failure policy every Gantry consumer shares: a message that does not
 * parse or validate goes to the dead-letter topic and the consumer moves on; a failing dependency
 * is retried with capped exponential backoff, heartbeating so the member is not evicted meanwhile.
 */
export class BatchConsumer<T> {
  private consumer: Consumer | null = null;
  private joined = false;
  private fetching = false;
  private stopping = false;

  constructor(private readonly opts: BatchConsumerOptions<T>) {}

  /** Joined its group and started fetching, so its offsets are resolved: nothing produced from now on is missed. */
  get isJoined(): boolean {
    return this.joined && this.fetching;
  }

  /** Resolves once isJoined, or rejects after `timeoutMs`. */
  async whenJoined(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.isJoined) {
      if (Date.now() > deadline) throw new Error(`consumer group ${this.opts.groupId} did not join within ${timeoutMs} ms`);
      await sleep(20);
    }
  }

  /** Ready once the consumer has joined its group (before that, messages would be missed or late). */
  readinessCheck(name: string): { name: string; check(): Promise<void> } {
    return {
      name,
      check: async () => {
        if (!this.isJoined) throw new Error(`${name} has not joined consumer group ${this.opts.groupId}`);
      },
    };
  }

  async start(): Promise<void> {
    const o = this.opts;
    const consumer = o.kafka.consumer({
      groupId: o.groupId,
      sessionTimeout: o.sessionTimeoutMs ?? 10_000,
      heartbeatInterval: 3_000,
      // How long the broker holds an empty fetch. It answers as soon as a message arrives, so this
      // costs no latency; it only sets how often an idle consumer asks (at 100 ms the polls of the
      // five services' consumers were a tenth of a core in the broker and clients, doing nothing).
      maxWaitTimeInMs: 1_000,
      retry: { retries: 1_000_000, initialRetryTime: 300, maxRetryTime: 5_000 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, () => {
      this.joined = true;
      this.fetching = false;
      this.handled.clear(); // a new assignment: partitions handled before may be someone else's now
    });
    consumer.on(consumer.events.FETCH_START, () => (this.fetching = this.joined));
    consumer.on(consumer.events.CRASH, (e) => {
      // Not ready until it has joined again. kafkajs restarts a consumer only after errors it deems
      // retriable; after any other (e.g. no group coordinator while the broker restarts) it stays
      // dead, so a fresh consumer is started here instead.
      this.joined = false;
      this.fetching = false;
      const kafkajsRestarts = e.payload.restart !== false;
      o.logger.error({ err: e.payload.error, groupId: o.groupId, kafkajsRestarts }, kafkajsRestarts ? 'consumer crashed; kafkajs restarts it' : 'consumer crashed for good; starting a new one');
      if (!kafkajsRestarts) this.replaceLater(consumer);
    });
    await consumer.connect();
    await consumer.subscribe({ topic: o.topic, fromBeginning: o.fromBeginning ?? true });
    await consumer.run({
      autoCommit: false,
      autoCommitInterval: COMMIT_INTERVAL_MS, // what commitOffsetsIfNecessary() waits for
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: o.partitionsConsumedConcurrently ?? 4,
      eachBatch: (payload) => this.track(this.onBatch(payload)),
    });
  }

  /** Batches being handled, so that stop() commits only after they are done. */
  private readonly inFlight = new Set<Promise<void>>();
  /** The next offset to read per partition: what has been handled, for the commit at stop. */
  private readonly handled = new Map<number, string>();

  private track(p: Promise<void>): Promise<void> {
    this.inFlight.add(p);
    return p.finally(() => this.inFlight.delete(p));
  }

  private async onBatch({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const o = this.opts;
    const step = o.maxItemsPerCall ?? 500;
    let deadLettered = 0;
    for (let start = 0; start < batch.messages.length; start += step) {
      const messages = batch.messages.slice(start, start + step);
      const valid: ConsumedMessage<T>[] = [];
      const dead: DeadLetter[] = [];
      for (const m of messages) {
        const parsed = o.parse(m.value);
        if (parsed.ok) {
          valid.push({ value: parsed.value, key: m.key?.toString('utf8') ?? null, headers: m.headers, partition: batch.partition, offset: m.offset });
        } else {
          dead.push({ sourceTopic: batch.topic, partition: batch.partition, offset: m.offset, key: m.key, value: m.value, reason: parsed.reason });
        }
      }
      for (let attempt = 0; ; attempt++) {
        if (!isRunning() || isStale() || this.stopping) return; // uncommitted: redelivered to whoever owns the partition next
        try {
          const failures = valid.length > 0 ? await o.handleBatch(valid) : [];
          for (const f of failures) {
            dead.push({ sourceTopic: batch.topic, partition: batch.partition, offset: f.item.offset, key: f.item.key ? Buffer.from(f.item.key) : null, value: Buffer.from(JSON.stringify(f.item.value)), reason: f.error.message });
          }
          if (!o.skipDeadLetters) await o.deadLetters.publish(dead);
          break;
        } catch (e) {
          const delay = Math.min(5_000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
          o.logger.warn({ err: e, topic: batch.topic, partition: batch.partition, attempt }, 'batch failed; retrying');
          await sleep(delay);
          await heartbeat().catch(() => undefined);
        }
      }
      deadLettered += dead.length;
      const last = messages[messages.length - 1].offset;
      resolveOffset(last);
      this.handled.set(batch.partition, (BigInt(last) + 1n).toString());
      await commitOffsetsIfNecessary();
      await heartbeat();
    }
    o.onBatchDone?.({ size: batch.messages.length, deadLettered, partition: batch.partition, lag: Number(batch.offsetLag()) });
  }

  /** Replaces a consumer kafkajs gave up on, retrying every few seconds until a new one runs. */
  private replaceLater(dead: Consumer): void {
    setTimeout(() => {
      if (this.stopping || this.consumer !== dead) return;
      void dead
        .disconnect()
        .catch(() => undefined)
        .then(() => (this.stopping ? undefined : this.start()))
        .catch((err) => {
          this.opts.logger.error({ err, groupId: this.opts.groupId }, 'could not start a new consumer; trying again');
          this.replaceLater(this.consumer ?? dead);
        });
    }, 2_000);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.joined = false;
    await Promise.allSettled([...this.inFlight]);
    // What was handled since the last periodic commit, so a clean restart redelivers nothing.
    const offsets = [...this.handled].map(([partition, offset]) => ({ topic: this.opts.topic, partition, offset }));
    if (offsets.length > 0) {
      await this.consumer?.commitOffsets(offsets).catch((err) => this.opts.logger.warn({ err, groupId: this.opts.groupId }, 'could not commit offsets at stop'));
    }
    await this.consumer?.disconnect();
  }
}
