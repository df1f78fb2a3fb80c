import { Kafka, Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { propagation } from '@opentelemetry/api';
import { JobLifecycleMessage, JobLifecycleSchema, TOPICS, messageParser } from '@gantry/contracts';
import {
  BatchConsumer, BatchConsumerOptions, DEAD_LETTER_HEADERS, DEFAULT_PARTITIONER, DeadLetterPublisher, OutboxRelay, createKafka,
  currentTraceHeaders, ensureTopics, extractTraceContext,
} from '@gantry/messaging';
import { enqueueOutbox, inTransaction } from '@gantry/persistence';
import { openDataSource, silentLogger, testEnv, uniqueTag } from '@gantry/testing';
import { waitFor } from '@gantry/stack';

let ds: DataSource;
let kafka: Kafka;
let producer: Producer;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new BasicTracerProvider());
  ds = await openDataSource();
  kafka = createKafka({ brokers: testEnv.kafkaBrokers, clientId: 'messaging-int' });
  producer = kafka.producer({ createPartitioner: DEFAULT_PARTITIONER });
  await producer.connect();
});
afterAll(async () => {
  await producer.disconnect();
  await ds.destroy();
});

/** Reads everything on `topic` from the start with a fresh group until `until` holds. */
async function collect(topic: string, until: (msgs: Array<{ key: string | null; value: string; headers: Record<string, string> }>) => boolean) {
  const consumer = kafka.consumer({ groupId: uniqueTag('collect'), maxWaitTimeInMs: 100 });
  const seen: Array<{ key: string | null; value: string; headers: Record<string, string> }> = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
      seen.push({ key: message.key?.toString() ?? null, value: message.value?.toString() ?? '', headers });
    },
  });
  try {
    await waitFor(`messages on ${topic}`, () => until(seen), { timeoutMs: 30_000 });
    return seen;
  } finally {
    await consumer.disconnect();
  }
}

describe('OutboxRelay', () => {
  it('publishes committed rows with their headers, deletes them, and never publishes rolled-back ones', async () => {
    // A topic of its own with one partition: its messages arrive in the order the relay sent them,
    // which is the rows' order, so once the row committed after the rollback has arrived, a
    // rolled-back row that had been written anyway would have arrived before it.
    const topic = uniqueTag('outbox-test');
    await ensureTopics(kafka, { [topic]: 1 });
    const [committed, rolledBack, after] = [uniqueTag('job'), uniqueTag('never'), uniqueTag('after')];
    const row = (key: string, headers?: Record<string, string>) => ({ topic, key, value: { type: 'JOB_CREATED', jobId: key, at: 1 }, headers });
    const relay = new OutboxRelay({ dataSource: ds, producer, logger: silentLogger(), pollIntervalMs: 200 });
    await relay.start();
    try {
      await inTransaction(ds, (sql) => enqueueOutbox(sql, [row(committed, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })]));
      await expect(
        inTransaction(ds, async (sql) => {
          await enqueueOutbox(sql, [row(rolledBack)]);
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      await inTransaction(ds, (sql) => enqueueOutbox(sql, [row(after)]));

      const seen = await collect(topic, (m) => m.some((x) => x.key === after));
      expect(seen.map((x) => x.key)).toEqual([committed, after]);
      expect(JSON.parse(seen[0].value)).toEqual({ type: 'JOB_CREATED', jobId: committed, at: 1 });
      expect(seen[0].headers.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
      await waitFor('outbox drained', async () => (await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE topic = $1`, [topic]))[0].n === 0, { timeoutMs: 10_000 });
    } finally {
      await relay.stop();
    }
  }, 40_000);
});

type ConsumerSettings = Partial<Pick<BatchConsumerOptions<JobLifecycleMessage>, 'groupId' | 'fromBeginning' | 'sessionTimeoutMs' | 'maxItemsPerCall'>>;

/** A lifecycle-message consumer of `topic` that records each handled message's `at`, after `work` (which may throw). */
function recordingConsumer(topic: string, handled: number[], settings: ConsumerSettings = {}, work: () => Promise<void> | void = () => undefined): BatchConsumer<JobLifecycleMessage> {
  return new BatchConsumer<JobLifecycleMessage>({
    kafka,
    groupId: uniqueTag('group'),
    topic,
    parse: messageParser(JobLifecycleSchema),
    handleBatch: async (items) => {
      await work();
      handled.push(...items.map((i) => i.value.at));
      return [];
    },
    deadLetters: new DeadLetterPublisher(producer),
    logger: silentLogger(),
    ...settings,
  });
}

describe('BatchConsumer', () => {
  it('dead-letters poison messages with the reason and source, and keeps consuming good ones', async () => {
    const topic = uniqueTag('poison-test');
    await ensureTopics(kafka, { [topic]: 2 });
    const handled: number[] = [];
    const consumer = recordingConsumer(topic, handled);
    await consumer.start();
    try {
      const marker = uniqueTag('bad');
      await producer.send({
        topic,
        messages: [
          { key: 'a', value: JSON.stringify({ type: 'JOB_CREATED', at: 101 }) },
          { key: marker, value: '{not json' },
          { key: marker, value: JSON.stringify({ type: 'NOPE', at: 1 }) },
          { key: 'a', value: JSON.stringify({ type: 'JOB_CREATED', at: 102 }) },
        ],
      });
      await waitFor('good messages handled', () => handled.includes(101) && handled.includes(102), { timeoutMs: 30_000 });
      const dead = await collect(TOPICS.deadLetter, (m) => m.filter((x) => x.key === marker).length === 2);
      const mine = dead.filter((x) => x.key === marker);
      expect(mine.map((m) => m.headers[DEAD_LETTER_HEADERS.reason])).toEqual([expect.stringMatching(/invalid JSON/), expect.stringMatching(/type/)]);
      expect(mine.every((m) => m.headers[DEAD_LETTER_HEADERS.sourceTopic] === topic)).toBe(true);
      expect(mine.every((m) => /^\d+$/.test(m.headers[DEAD_LETTER_HEADERS.sourceOffset]))).toBe(true);
      expect(mine[0].value).toBe('{not json');
    } finally {
      await consumer.stop();
    }
  }, 40_000);

  it('retries a failing handler without losing or skipping the batch', async () => {
    const topic = uniqueTag('retry-test');
    await ensureTopics(kafka, { [topic]: 1 });
    let failures = 2;
    const handled: number[] = [];
    const consumer = recordingConsumer(topic, handled, {}, () => {
      if (failures-- > 0) throw new Error('database briefly away');
    });
    await consumer.start();
    try {
      await producer.send({ topic, messages: [{ key: 'k', value: JSON.stringify({ type: 'JOB_CREATED', at: 7 }) }] });
      await waitFor('handled after retries', () => handled.includes(7), { timeoutMs: 30_000 });
      expect(handled).toEqual([7]);
    } finally {
      await consumer.stop();
    }
  });

  it('commits what it handled when it stops: the next member of the group starts after it', async () => {
    const topic = uniqueTag('commit-at-stop');
    await ensureTopics(kafka, { [topic]: 2 });
    const groupId = uniqueTag('group');
    const consume = (handled: number[]) => recordingConsumer(topic, handled, { groupId, fromBeginning: true });
    const first: number[] = [];
    const a = consume(first);
    await a.start();
    await a.whenJoined(30_000);
    // One message at a time, each handled before the next is sent: many batches well within the
    // periodic commit's interval, so only the commit at stop can cover the last of them.
    for (let at = 1; at <= 6; at++) {
      await producer.send({ topic, messages: [{ key: `k${at}`, value: JSON.stringify({ type: 'JOB_CREATED', at }) }] });
      await waitFor(`message ${at} handled`, () => first.includes(at), { timeoutMs: 20_000 });
    }
    await a.stop();

    const second: number[] = [];
    const b = consume(second);
    await b.start();
    try {
      await b.whenJoined(30_000);
      await producer.send({ topic, messages: [{ key: 'k7', value: JSON.stringify({ type: 'JOB_CREATED', at: 7 }) }] });
      await waitFor('message 7 handled', () => second.includes(7), { timeoutMs: 20_000 });
      expect(second).toEqual([7]);
    } finally {
      await b.stop();
    }
  }, 60_000);

  it('a batch slower than the session timeout, handled in parts, keeps its member: each message handled once, in order', async () => {
    const topic = uniqueTag('slow-batch-test');
    await ensureTopics(kafka, { [topic]: 1 });
    const ids = Array.from({ length: 60 }, (_, i) => i);
    // Produced before the consumer starts, so its first fetch returns them as one batch.
    await producer.send({ topic, messages: ids.map((at) => ({ key: 'k', value: JSON.stringify({ type: 'JOB_CREATED', at }) })) });
    const handled: number[] = [];
    const groupId = uniqueTag('group');
    // Slow work: 6 calls x 1.2 s outlast the 6 s session; only the heartbeats between calls keep the member.
    const consumer = recordingConsumer(topic, handled, { groupId, sessionTimeoutMs: 6_000, maxItemsPerCall: 10 }, () => new Promise<void>((r) => setTimeout(r, 1_200)));
    await consumer.start();
    try {
      // An evicted member's commits fail and the batch is redelivered (handled twice), over and over.
      const admin = kafka.admin();
      await admin.connect();
      try {
        await waitFor('every offset committed', async () => {
          const [p] = (await admin.fetchOffsets({ groupId, topics: [topic] }))[0].partitions;
          return p.offset === String(ids.length);
        }, { timeoutMs: 60_000 });
      } finally {
        await admin.disconnect();
      }
      expect(handled).toEqual(ids);
    } finally {
      await consumer.stop();
    }
  }, 90_000);
});

describe('trace context', () => {
  it('survives the trip through stored headers', () => {
    const tracer = trace.getTracer('test');
    tracer.startActiveSpan('producer', (span) => {
      const headers = currentTraceHeaders();
      const extracted = trace.getSpanContext(extractTraceContext(headers));
      expect(extracted?.traceId).toBe(span.spanContext().traceId);
      span.end();
    });
  });
});
