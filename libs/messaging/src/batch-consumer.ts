import type { Consumer, EachBatchPayload, IHeaders } from 'kafkajs';
import type { ParseResult } from '@gantry/contracts';
import { DeadLetter, DeadLetterPublisher } from './dead-letter';
import { isTransientFailure } from './failure-kind';
import { KafkaConnection } from './kafka-client';
import { MessageHeaders } from './message';
import { PartitionProgress } from './partition-progress';
import { messagesDeadLettered, messagesRejected } from './rejections';

export interface ConsumedMessage<T> {
  value: T;
  key: string | null;
  headers: MessageHeaders;
  partition: number;
  offset: string;
  /** The record's timestamp (ms): the broker's append time on topics set to LogAppendTime. */
  timestamp: number;
}

/** A message as it came, before parsing: what a signature check looks at. */
export interface RawMessage {
  key: string | null;
  value: Buffer | null;
  headers: MessageHeaders;
  partition: number;
  offset: string;
  timestamp: number;
}

/**
 * Why a message is refused although it parses (contract 4.1): `reason` is a short code, the label
 * of gantry_messages_rejected_total; `detail` goes with it into the dead letter.
 */
export interface Rejection {
  reason: string;
  detail?: string;
  /** Worth one more look after `reauthenticate` (the sender may have been enrolled or rotated a moment ago). */
  retryable?: boolean;
}

/** A message the handler will never process: dead-lettered with the error, or counted as rejected. */
export interface TerminalFailure<T> {
  item: ConsumedMessage<T>;
  error: Error;
  /** Set when the message was refused for who sent it or when (counted as rejected, not as bad data). */
  rejection?: Rejection;
}

export interface ConsumerLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface BatchConsumerOptions<T> {
  kafka: KafkaConnection;
  groupId: string;
  topic: string;
  fromBeginning?: boolean;
  parse: (raw: Buffer | null) => ParseResult<T>;
  /** Whether this reader cares about a message at all (an agent: its own nodes' commands); the rest are skipped unparsed. */
  relevant?: (m: RawMessage) => boolean;
  /** Before parsing: is the sender who it says it is? A rejection parks the message (never retried). */
  authenticate?: (m: RawMessage) => Rejection | null;
  /**
   * Called with the messages of a run whose authentication failed retryably (a sender enrolled,
   * rotated or revoked a moment ago?); once it resolves, those are authenticated once more before
   * they are refused.
   */
  reauthenticate?: (messages: RawMessage[]) => Promise<void>;
  /** After parsing: may this sender say this, now? (its node id in the body, its clock). */
  admit?: (item: ConsumedMessage<T>) => Rejection | null;
  /**
   * Handles the admitted messages of a batch, at most `maxItemsPerCall` at a time. Throw when the
   * batch could not be handled (it is tried again, see the failure policy in docs/services.md); return
   * the messages it will never handle, to park them.
   */
  handleBatch: (items: ConsumedMessage<T>[]) => Promise<TerminalFailure<T>[]>;
  /**
   * Where parked messages go. Null for a reader that may not write the dead-letter topic (agents,
   * contract 4.1) or a second reader of a topic (its first reader parks them): they are dropped
   * and passed to onDiscarded.
   */
  deadLetters: DeadLetterPublisher | null;
  onDiscarded?: (letters: DeadLetter[]) => void;
  /** Count refusals in gantry_messages_rejected_total (default true; off for a second reader of a topic, so nothing counts twice). */
  countRejections?: boolean;
  /** Whether a handler failure may pass if tried later (default: isTransientFailure). */
  isTransient?: (err: unknown) => boolean;
  /** Tries of a failure that is not transient before the batch is split to find the message that fails (3). */
  maxAttempts?: number;
  /** A partition with messages behind it and no progress for this long makes the consumer not ready (30 s). */
  stallMs?: number;
  partitionsConsumedConcurrently?: number;
  /** How the group's partitions are shared (default kafkajs round-robin); see keyedPartitionAssigner. */
  partitionAssigner?: Parameters<KafkaConnection['rawConsumer']>[0]['partitionAssigners'];
  logger: ConsumerLogger;
  /** Called with this member's partitions whenever the group (re)assigns them. */
  onAssignment?: (partitions: number[]) => void;
  /**
   * Called when a fetch from the broker completes (with or without messages) and when the consumer
   * stops hearing the broker for a reason it knows (a crash, a new assignment): what a reader needs
   * to tell its own silence from its producers' (the reconciler's phantom judgement, ADR 0007).
   */
  onFetch?: (atMs: number) => void;
  onInterrupted?: () => void;
  onBatchDone?: (stats: { size: number; deadLettered: number; partition: number; lag: number }) => void;
  /** How often an idle consumer asks the broker for more (ms, 1000); it answers at once when a message arrives (or, with minBytes, that many bytes). */
  maxWaitTimeInMs?: number;
  /**
   * Bytes a fetch waits for, up to maxWaitTimeInMs, before the broker answers (1: answer as soon as
   * any message is there). Above 1 only where a message may wait that long: a steady stream of small
   * messages (heartbeats) is then taken in fewer, larger batches, and what costs per batch (a fetch,
   * a Redis pipeline, a database read) is paid less often.
   */
  minBytes?: number;
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
 * an OffsetCommit per batch is a broker request per small batch (ADR 0012). A replica
 * that dies, or a partition that moves, redelivers up to this much; every consumer is idempotent.
 */
const COMMIT_INTERVAL_MS = 1_000;

function decodeHeaders(h: IHeaders | undefined): MessageHeaders {
  const out: MessageHeaders = {};
  if (!h) return out;
  for (const k of Object.keys(h)) {
    const v = h[k];
    const first = Array.isArray(v) ? v[0] : v;
    if (first !== undefined) out[k] = Buffer.isBuffer(first) ? first.toString('utf8') : String(first);
  }
  return out;
}

/** What became of a run of messages: handled (with what it refused), or abandoned (stopping, rebalanced). */
type Outcome<T> = { failures: TerminalFailure<T>[] } | null;

/**
 * kafkajs `eachBatch` with the failure policy every Gantry consumer shares (docs/services.md): a message that
 * does not parse, is not from whom it claims, or can never be handled is parked on the dead-letter
 * topic and the partition goes on; a dependency that is down is waited for, and a partition that
 * stops advancing shows on /readyz.
 */
export class BatchConsumer<T> {
  private consumer: Consumer | null = null;
  private joined = false;
  private fetching = false;
  private stopping = false;
  readonly progress: PartitionProgress;

  constructor(private readonly opts: BatchConsumerOptions<T>) {
    this.progress = new PartitionProgress(opts.groupId, opts.topic, opts.stallMs ?? 30_000);
  }

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

  /** Ready once the consumer has joined its group, and while none of its partitions is stalled. */
  readinessCheck(name: string): { name: string; check(): Promise<void> } {
    return {
      name,
      check: async () => {
        if (!this.isJoined) throw new Error(`${name} has not joined consumer group ${this.opts.groupId}`);
        const stalled = this.progress.stalled();
        if (stalled) throw new Error(`${name}: ${stalled}`);
      },
    };
  }

  async start(): Promise<void> {
    const o = this.opts;
    const consumer = o.kafka.rawConsumer({
      groupId: o.groupId,
      sessionTimeout: o.sessionTimeoutMs ?? 10_000,
      heartbeatInterval: 3_000,
      // How long the broker holds an empty fetch. It answers as soon as a message arrives, so this
      // costs no latency; it only sets how often an idle consumer asks (shorter, idle polls cost the
      // broker and clients CPU for nothing: ADR 0012).
      maxWaitTimeInMs: o.maxWaitTimeInMs ?? 1_000,
      minBytes: o.minBytes ?? 1,
      retry: { retries: 1_000_000, initialRetryTime: 300, maxRetryTime: 5_000 },
      ...(o.partitionAssigner ? { partitionAssigners: o.partitionAssigner } : {}),
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      this.joined = true;
      this.fetching = false;
      this.handled.clear(); // a new assignment: partitions handled before may be someone else's now
      this.progress.assigned(e.payload.memberAssignment[o.topic] ?? []);
      o.onAssignment?.(e.payload.memberAssignment[o.topic] ?? []);
      o.onInterrupted?.();
    });
    consumer.on(consumer.events.FETCH_START, () => (this.fetching = this.joined));
    if (o.onFetch) consumer.on(consumer.events.FETCH, () => o.onFetch!(Date.now()));
    consumer.on(consumer.events.CRASH, (e) => {
      // Not ready until it has joined again. kafkajs restarts a consumer only after errors it deems
      // retriable; after any other (e.g. no group coordinator while the broker restarts) it stays
      // dead, so a fresh consumer is started here instead.
      this.joined = false;
      this.fetching = false;
      o.onInterrupted?.();
      const kafkajsRestarts = e.payload.restart !== false;
      o.logger.error(
        { err: e.payload.error, groupId: o.groupId, kafkajsRestarts },
        kafkajsRestarts ? 'consumer crashed; kafkajs restarts it' : 'consumer crashed for good; starting a new one',
      );
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

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale } = payload;
    const o = this.opts;
    const step = o.maxItemsPerCall ?? 500;
    const highWatermark = BigInt(batch.highWatermark);
    this.progress.batchStarted(batch.partition, BigInt(batch.firstOffset() ?? batch.highWatermark), highWatermark);
    const live = () => isRunning() && !isStale() && !this.stopping;
    let deadLettered = 0;
    for (let start = 0; start < batch.messages.length; start += step) {
      const messages = batch.messages.slice(start, start + step);
      const raws = messages.map((m): RawMessage => ({
        key: m.key?.toString('utf8') ?? null,
        value: m.value,
        headers: decodeHeaders(m.headers),
        partition: batch.partition,
        offset: m.offset,
        timestamp: Number(m.timestamp),
      }));
      const relevant = o.relevant ? raws.filter((r) => o.relevant!(r)) : raws;
      const screened = await this.admit(batch.topic, relevant, live);
      if (!screened) return; // stopping or rebalanced while the authenticator was unreachable
      const { admitted, parked } = screened;
      const outcome = admitted.length > 0 ? await this.handle(admitted, { live, heartbeat }) : { failures: [] };
      if (!outcome) return; // uncommitted: redelivered to whoever owns the partition next
      parked.push(...outcome.failures.map((f) => this.letterFor(batch.topic, f)));
      for (const f of outcome.failures) if (f.rejection) this.countRejection(batch.topic, f.rejection.reason);
      if (!(await this.park(parked, live, heartbeat))) return;
      deadLettered += parked.length;
      const last = messages[messages.length - 1].offset;
      resolveOffset(last);
      this.handled.set(batch.partition, (BigInt(last) + 1n).toString());
      this.progress.advanced(batch.partition, BigInt(last) + 1n);
      await commitOffsetsIfNecessary();
      await heartbeat();
    }
    o.onBatchDone?.({ size: batch.messages.length, deadLettered, partition: batch.partition, lag: Number(batch.offsetLag()) });
  }

  /** Authenticates, parses and admits each message; what fails any of the three is parked. */
  private async admit(topic: string, messages: RawMessage[], live: () => boolean): Promise<{ admitted: ConsumedMessage<T>[]; parked: DeadLetter[] } | null> {
    const o = this.opts;
    const admitted: ConsumedMessage<T>[] = [];
    const parked: DeadLetter[] = [];
    const refuse = (raw: RawMessage, reason: string) =>
      parked.push({ sourceTopic: topic, partition: raw.partition, offset: raw.offset, key: raw.key, value: raw.value, reason });
    const passed: RawMessage[] = [];
    let doubtful: RawMessage[] = [];
    const authenticate = (raw: RawMessage, last: boolean) => {
      const auth = o.authenticate?.(raw) ?? null;
      if (!auth) passed.push(raw);
      else if (auth.retryable && !last) doubtful.push(raw);
      else {
        this.countRejection(topic, auth.reason);
        refuse(raw, `rejected: ${auth.reason}${auth.detail ? `: ${auth.detail}` : ''}`);
      }
    };
    for (const raw of messages) authenticate(raw, !o.reauthenticate);
    if (doubtful.length > 0) {
      // One more look once the authenticator has learned what changed; then the order of the
      // partition again, for a message that passed on the second look.
      const again = doubtful;
      doubtful = [];
      // The authenticator's store may be away (the database): wait for it rather than refuse
      // messages that may be genuine.
      for (let attempt = 0; ; attempt++) {
        if (!live()) return null;
        try {
          await o.reauthenticate!(again);
          break;
        } catch (err) {
          o.logger.warn({ err, topic, attempt }, 'could not check what changed for messages that failed to verify; retrying');
          await sleep(Math.min(5_000, 100 * 2 ** attempt));
        }
      }
      for (const raw of again) authenticate(raw, true);
      passed.sort((x, y) => (BigInt(x.offset) < BigInt(y.offset) ? -1 : 1));
    }
    for (const raw of passed) {
      const { key, headers, partition, timestamp } = raw;
      const parsed = o.parse(raw.value);
      if (!parsed.ok) {
        refuse(raw, parsed.reason);
        continue;
      }
      const item: ConsumedMessage<T> = { value: parsed.value, key, headers, partition, offset: raw.offset, timestamp };
      const verdict = o.admit?.(item) ?? null;
      if (verdict) {
        this.countRejection(topic, verdict.reason);
        refuse(raw, `rejected: ${verdict.reason}${verdict.detail ? `: ${verdict.detail}` : ''}`);
        continue;
      }
      admitted.push(item);
    }
    return { admitted, parked };
  }

  private countRejection(topic: string, reason: string): void {
    if (this.opts.countRejections !== false) messagesRejected.inc({ topic, reason });
  }

  /**
   * Hands `items` to the handler until it is done with them. A transient failure (a dependency
   * down) is retried for as long as it lasts; any other is tried maxAttempts times, then the items
   * are split in halves and each half handled the same way, so that one message that can never be
   * handled ends alone, as a terminal failure, and the rest go through. Null when the consumer
   * stopped or lost the partition meanwhile.
   */
  private async handle(items: ConsumedMessage<T>[], run: { live: () => boolean; heartbeat: () => Promise<void> }): Promise<Outcome<T>> {
    const o = this.opts;
    const isTransient = o.isTransient ?? isTransientFailure;
    const maxAttempts = o.maxAttempts ?? 3;
    for (let attempt = 0, failed = 0; ; attempt++) {
      if (!run.live()) return null;
      try {
        return { failures: await o.handleBatch(items) };
      } catch (err) {
        const transient = isTransient(err);
        if (!transient) failed++;
        o.logger.warn(
          { err, topic: o.topic, partition: items[0].partition, offset: items[0].offset, size: items.length, attempt, transient },
          'batch failed; retrying',
        );
        if (!transient && failed >= maxAttempts) {
          if (items.length === 1) return { failures: [{ item: items[0], error: err instanceof Error ? err : new Error(String(err)) }] };
          const half = Math.ceil(items.length / 2);
          const first = await this.handle(items.slice(0, half), run);
          if (!first) return null;
          const second = await this.handle(items.slice(half), run);
          if (!second) return null;
          return { failures: [...first.failures, ...second.failures] };
        }
        await sleep(Math.min(5_000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2));
        await run.heartbeat().catch(() => undefined);
      }
    }
  }

  private letterFor(topic: string, f: TerminalFailure<T>): DeadLetter {
    const reason = f.rejection ? `rejected: ${f.rejection.reason}${f.rejection.detail ? `: ${f.rejection.detail}` : ''}` : f.error.message;
    return { sourceTopic: topic, partition: f.item.partition, offset: f.item.offset, key: f.item.key, value: JSON.stringify(f.item.value), reason };
  }

  /** Writes the dead letters (retrying while Kafka is away); false when the consumer stopped meanwhile. */
  private async park(letters: DeadLetter[], live: () => boolean, heartbeat: () => Promise<void>): Promise<boolean> {
    if (letters.length === 0) return true;
    if (!this.opts.deadLetters) {
      this.opts.onDiscarded?.(letters);
      return true;
    }
    for (let attempt = 0; ; attempt++) {
      if (!live()) return false;
      try {
        await this.opts.deadLetters.publish(letters);
        messagesDeadLettered.inc({ topic: this.opts.topic }, letters.length);
        return true;
      } catch (err) {
        this.opts.logger.warn({ err, topic: this.opts.topic, attempt }, 'dead letters not written; retrying');
        await sleep(Math.min(5_000, 100 * 2 ** attempt));
        await heartbeat().catch(() => undefined);
      }
    }
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
      await this.consumer
        ?.commitOffsets(offsets)
        .catch((err) => this.opts.logger.warn({ err, groupId: this.opts.groupId }, 'could not commit offsets at stop'));
    }
    await this.consumer?.disconnect();
    this.progress.assigned([]);
  }
}
