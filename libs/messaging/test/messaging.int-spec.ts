import { DataSource } from 'typeorm';
import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { propagation } from '@opentelemetry/api';
import { JobLifecycleMessage, JobLifecycleSchema, OUTBOX_DISPATCH, TOPICS, messageParser } from '@gantry/contracts';
import {
  BatchConsumer,
  BatchConsumerOptions,
  DEAD_LETTER_HEADERS,
  DEAD_LETTER_MAX_VALUE_BYTES,
  DeadLetterPublisher,
  KafkaConnection,
  MAX_MESSAGE_BYTES,
  MessageProducer,
  OutboxExpander,
  OutboxRelay,
  createKafka,
  currentTraceHeaders,
  ensureTopics,
  extractTraceContext,
  requestTraceHeaders,
  keyedPartitionAssigner,
  messagesRejected,
  partitionForKey,
} from '@gantry/messaging';
import { enqueueOutbox, inTransaction } from '@gantry/persistence';
import { openDataSource, silentLogger, testEnv, uniqueTag } from '@gantry/testing';
import { waitFor } from '@gantry/stack';

let ds: DataSource;
let kafka: KafkaConnection;
let producer: MessageProducer;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new BasicTracerProvider());
  ds = await openDataSource();
  kafka = createKafka({ brokers: testEnv.kafkaBrokers, clientId: 'messaging-int', security: testEnv.kafkaSecurity() });
  producer = await kafka.connectProducer();
  // Dispatch rows other suites' placements left: the services' relays expand them; these bare
  // relays would find no such topic and park each one, seconds apiece, before reaching their own rows.
  await ds.query(`DELETE FROM outbox WHERE topic = $1`, [OUTBOX_DISPATCH]);
});
afterAll(async () => {
  await kafka.disconnect();
  await ds.destroy();
});

type Seen = { key: string | null; value: string; headers: Record<string, string>; partition: number };

/** Reads everything on `topic` from the start with a fresh group until `until` holds. */
async function collect(topic: string, until: (msgs: Seen[]) => boolean): Promise<Seen[]> {
  const consumer = kafka.rawConsumer({ groupId: uniqueTag('collect'), maxWaitTimeInMs: 100 });
  const seen: Seen[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message, partition }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
      seen.push({ key: message.key?.toString() ?? null, value: message.value?.toString() ?? '', headers, partition });
    },
  });
  try {
    await waitFor(`messages on ${topic}`, () => until(seen), { timeoutMs: 30_000 });
    return seen;
  } finally {
    await consumer.disconnect();
  }
}

const relayOf = (extra: Partial<ConstructorParameters<typeof OutboxRelay>[0]> = {}) =>
  new OutboxRelay({ dataSource: ds, producer, deadLetters: new DeadLetterPublisher(producer), logger: silentLogger(), pollIntervalMs: 200, ...extra });

describe('OutboxRelay', () => {
  it('publishes committed rows with their headers, deletes them, and never publishes rolled-back ones', async () => {
    // A topic of its own with one partition: its messages arrive in the order the relay sent them,
    // which is the rows' order, so once the row committed after the rollback has arrived, a
    // rolled-back row that had been written anyway would have arrived before it.
    const topic = uniqueTag('outbox-test');
    await ensureTopics(kafka, { [topic]: 1 });
    const [committed, rolledBack, after] = [uniqueTag('job'), uniqueTag('never'), uniqueTag('after')];
    const row = (key: string, headers?: Record<string, string>) => ({ topic, key, value: { type: 'JOB_CREATED', jobId: key, at: 1 }, headers });
    const relay = relayOf();
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
      await waitFor('outbox drained', async () => (await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE topic = $1`, [topic]))[0].n === 0, {
        timeoutMs: 10_000,
      });
    } finally {
      await relay.stop();
    }
  }, 40_000);

  it('parks a message over the size limit on the dead-letter topic, cut to fit, and publishes the rows behind it', async () => {
    const topic = uniqueTag('outbox-big');
    await ensureTopics(kafka, { [topic]: 1 });
    const [big, after] = [uniqueTag('big'), uniqueTag('after')];
    const relay = relayOf();
    await inTransaction(ds, (sql) =>
      enqueueOutbox(sql, [
        { topic, key: big, value: { blob: 'x'.repeat(MAX_MESSAGE_BYTES + 10) } },
        { topic, key: after, value: { ok: true } },
      ]),
    );
    await relay.start();
    try {
      await collect(topic, (m) => m.some((x) => x.key === after));
      const dead = (await collect(TOPICS.deadLetter, (m) => m.some((x) => x.key === big))).find((x) => x.key === big)!;
      expect(dead.headers[DEAD_LETTER_HEADERS.reason]).toMatch(/exceeds the \d+-byte limit/);
      expect(dead.headers[DEAD_LETTER_HEADERS.sourceTopic]).toBe(topic);
      expect(Number(dead.headers[DEAD_LETTER_HEADERS.originalBytes])).toBeGreaterThan(MAX_MESSAGE_BYTES);
      expect(dead.headers[DEAD_LETTER_HEADERS.originalSha256]).toMatch(/^[0-9a-f]{64}$/);
      expect(Buffer.byteLength(dead.value)).toBe(DEAD_LETTER_MAX_VALUE_BYTES);
      await waitFor('outbox drained', async () => (await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE key = ANY($1)`, [[big, after]]))[0].n === 0, {
        timeoutMs: 10_000,
      });
    } finally {
      await relay.stop();
    }
  }, 60_000);

  it('sends a claim larger than one request allows in several requests, in order, none refused', async () => {
    const topic = uniqueTag('outbox-many');
    await ensureTopics(kafka, { [topic]: 1 });
    const key = uniqueTag('k');
    // 40 messages of 200 KB: 8 MB, ten times what one request may hold; the broker refuses a batch over 1 MiB.
    await inTransaction(ds, (sql) =>
      enqueueOutbox(
        sql,
        Array.from({ length: 40 }, (_, i) => ({ topic, key, value: { i, pad: 'p'.repeat(200_000) } })),
      ),
    );
    const relay = relayOf();
    await relay.start();
    try {
      const seen = await collect(topic, (m) => m.filter((x) => x.key === key).length === 40);
      expect(seen.filter((x) => x.key === key).map((x) => JSON.parse(x.value).i)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    } finally {
      await relay.stop();
    }
  }, 60_000);

  it('vacuums the outbox after every vacuumEveryRows rows it published, and never when that is 0', async () => {
    const topic = uniqueTag('outbox-vacuum');
    await ensureTopics(kafka, { [topic]: 1 });
    const vacuumCount = async () => Number((await ds.query(`SELECT pg_stat_get_vacuum_count('outbox'::regclass) AS n`))[0].n);
    const publish = async (vacuumEveryRows: number) => {
      const key = uniqueTag('k');
      let vacuums = 0;
      // Claims of 10 rows: 50 rows are five claims, so a vacuum is due after the second and the fourth.
      const relay = relayOf({ batchSize: 10, vacuumEveryRows, onVacuumed: () => vacuums++ });
      await inTransaction(ds, (sql) =>
        enqueueOutbox(
          sql,
          Array.from({ length: 50 }, (_, i) => ({ topic, key, value: { i } })),
        ),
      );
      await relay.start();
      try {
        await waitFor('outbox drained', async () => (await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE key = $1`, [key]))[0].n === 0, {
          timeoutMs: 10_000,
        });
      } finally {
        await relay.stop();
      }
      return vacuums;
    };
    // Rows other suites left (their relays are gone) would be claimed too and shift the count.
    await ds.query(`DELETE FROM outbox`);
    const before = await vacuumCount();
    expect(await publish(20)).toBe(2);
    // The server counted them too (a service's relay may add its own, never take any away).
    await waitFor('vacuums counted', async () => (await vacuumCount()) >= before + 2, { timeoutMs: 5_000 });
    expect(await publish(0)).toBe(0);
  }, 40_000);

  it('claims at most its batch in one pass when the statistics say the outbox is empty', async () => {
    const topic = uniqueTag('outbox-claim');
    await ensureTopics(kafka, { [topic]: 1 });
    const fill = (n: number) =>
      inTransaction(ds, (sql) =>
        enqueueOutbox(
          sql,
          Array.from({ length: n }, (_, i) => ({ topic, key: null, value: { i } })),
        ),
      );
    // A vacuum of a table with pages and no rows leaves statistics of zero rows: the relays' own
    // vacuums do this whenever they catch up. Then a backlog arrives.
    await ds.query(`DELETE FROM outbox`);
    await fill(4000);
    await ds.query(`DELETE FROM outbox`);
    await ds.query(`VACUUM (TRUNCATE false) outbox`);
    await fill(4000);
    const relay = relayOf({ batchSize: 500 });
    // One claim in the nested loop the planner chose for a claim-and-delete statement took every
    // row (the locking subquery re-run per row, each run skipping the rows already taken) in ~n^2/2 steps.
    expect(await relay.publishBatch()).toBe(500);
    expect((await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE topic = $1`, [topic]))[0].n).toBe(3500);
    await ds.query(`DELETE FROM outbox WHERE topic = $1`, [topic]);
  }, 30_000);

  it('expands a pseudo-topic row into the messages it stands for, lazily, and signs the signed topic', async () => {
    const source = uniqueTag('pseudo');
    const topic = uniqueTag('outbox-expanded');
    await ensureTopics(kafka, { [topic]: 1 });
    let built = 0;
    const expander: OutboxExpander = {
      source,
      async prepare() {
        return function* expand(row) {
          const { n, tag } = JSON.parse(row.value) as { n: number; tag: string };
          for (let i = 0; i < n; i++) {
            built++;
            yield { topic, message: { key: tag, value: JSON.stringify({ i, pad: 'q'.repeat(100_000) }) } };
          }
        };
      },
    };
    const tag = uniqueTag('t');
    await inTransaction(ds, (sql) => enqueueOutbox(sql, [{ topic: source, key: tag, value: { n: 30, tag } }]));
    const relay = relayOf({ expanders: [expander], signer: { topic, header: 'x-sig', sign: (v) => `signed:${Buffer.byteLength(v)}` } });
    await relay.start();
    try {
      const seen = (await collect(topic, (m) => m.filter((x) => x.key === tag).length === 30)).filter((x) => x.key === tag);
      expect(seen.map((x) => JSON.parse(x.value).i)).toEqual(Array.from({ length: 30 }, (_, i) => i));
      expect(seen.every((x) => x.headers['x-sig'] === `signed:${Buffer.byteLength(x.value)}`)).toBe(true);
      expect(built).toBe(30);
    } finally {
      await relay.stop();
    }
  }, 60_000);
});

type ConsumerSettings = Partial<
  Pick<
    BatchConsumerOptions<JobLifecycleMessage>,
    'groupId' | 'fromBeginning' | 'sessionTimeoutMs' | 'maxItemsPerCall' | 'stallMs' | 'authenticate' | 'isTransient'
  >
>;

/** A lifecycle-message consumer of `topic` that records each handled message's `at`, after `work` (which may throw). */
function recordingConsumer(
  topic: string,
  handled: number[],
  settings: ConsumerSettings = {},
  work: (items: number[]) => Promise<void> | void = () => undefined,
): BatchConsumer<JobLifecycleMessage> {
  return new BatchConsumer<JobLifecycleMessage>({
    kafka,
    groupId: uniqueTag('group'),
    topic,
    parse: messageParser(JobLifecycleSchema),
    handleBatch: async (items) => {
      await work(items.map((i) => i.value.at));
      handled.push(...items.map((i) => i.value.at));
      return [];
    },
    deadLetters: new DeadLetterPublisher(producer),
    logger: silentLogger(),
    ...settings,
  });
}

const lifecycle = (at: number, key = 'k') => ({ key, value: JSON.stringify({ type: 'JOB_CREATED', at }) });

describe('BatchConsumer', () => {
  it('dead-letters poison messages with the reason and source, and keeps consuming good ones', async () => {
    const topic = uniqueTag('poison-test');
    await ensureTopics(kafka, { [topic]: 2 });
    const handled: number[] = [];
    const consumer = recordingConsumer(topic, handled);
    await consumer.start();
    try {
      const marker = uniqueTag('bad');
      await producer.send(topic, [
        lifecycle(101, 'a'),
        { key: marker, value: '{not json' },
        { key: marker, value: JSON.stringify({ type: 'NOPE', at: 1 }) },
        lifecycle(102, 'a'),
      ]);
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

  it('refuses what fails authentication before parsing: dead-lettered with the reason, counted, never handled', async () => {
    const topic = uniqueTag('auth-test');
    await ensureTopics(kafka, { [topic]: 1 });
    const handled: number[] = [];
    const consumer = recordingConsumer(topic, handled, {
      authenticate: (m) => (m.headers['x-ok'] === 'yes' ? null : { reason: 'unsigned', detail: 'no x-ok' }),
    });
    const before = (await messagesRejected.get()).values.find((v) => v.labels.topic === topic && v.labels.reason === 'unsigned')?.value ?? 0;
    await consumer.start();
    try {
      const forged = uniqueTag('forged');
      await producer.send(topic, [{ ...lifecycle(1, forged) }, { ...lifecycle(2), headers: { 'x-ok': 'yes' } }]);
      await waitFor('the signed one handled', () => handled.includes(2), { timeoutMs: 30_000 });
      const dead = (await collect(TOPICS.deadLetter, (m) => m.some((x) => x.key === forged))).find((x) => x.key === forged)!;
      expect(dead.headers[DEAD_LETTER_HEADERS.reason]).toBe('rejected: unsigned: no x-ok');
      expect(handled).toEqual([2]);
      const after = (await messagesRejected.get()).values.find((v) => v.labels.topic === topic && v.labels.reason === 'unsigned')!.value;
      expect(after - before).toBe(1);
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
      if (failures-- > 0) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    await consumer.start();
    try {
      await producer.send(topic, [lifecycle(7)]);
      await waitFor('handled after retries', () => handled.includes(7), { timeoutMs: 30_000 });
      expect(handled).toEqual([7]);
    } finally {
      await consumer.stop();
    }
  });

  it('finds the one message a handler always fails on, parks it alone, and handles the rest of its batch', async () => {
    const topic = uniqueTag('bisect-test');
    await ensureTopics(kafka, { [topic]: 1 });
    const key = uniqueTag('k');
    const ids = Array.from({ length: 20 }, (_, i) => i + 1);
    await producer.send(
      topic,
      ids.map((at) => lifecycle(at, key)),
    );
    const handled: number[] = [];
    // A value the database refuses for good (say, a NUL byte in a text column): the same error on every try.
    const consumer = recordingConsumer(topic, handled, {}, (ats) => {
      if (ats.includes(13)) throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
    });
    await consumer.start();
    try {
      await waitFor('every other message handled', () => ids.every((i) => i === 13 || handled.includes(i)), { timeoutMs: 60_000 });
      const dead = (await collect(TOPICS.deadLetter, (m) => m.some((x) => x.key === key))).filter((x) => x.key === key);
      expect(dead.map((d) => JSON.parse(d.value).at)).toEqual([13]);
      expect(dead[0].headers[DEAD_LETTER_HEADERS.reason]).toMatch(/invalid byte sequence/);
      expect(handled).not.toContain(13);
      // The partition went on: a later message is handled too.
      await producer.send(topic, [lifecycle(21, key)]);
      await waitFor('a later message handled', () => handled.includes(21), { timeoutMs: 30_000 });
    } finally {
      await consumer.stop();
    }
  }, 90_000);

  it('reports not ready, naming the partition, while a partition with lag does not advance', async () => {
    const topic = uniqueTag('stall-test');
    await ensureTopics(kafka, { [topic]: 2 });
    let down = true;
    const handled: number[] = [];
    // The database is away (a transient failure): waited for, not parked, and the stall shows.
    const consumer = recordingConsumer(topic, handled, { stallMs: 1_500 }, () => {
      if (down) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
    });
    const ready = consumer.readinessCheck('stall-consumer');
    await consumer.start();
    try {
      await consumer.whenJoined(30_000);
      await ready.check();
      await producer.send(topic, [lifecycle(1)]);
      const p = partitionForKey('k', 2);
      await waitFor(
        'not ready',
        () =>
          ready.check().then(
            () => false,
            (e: Error) => e.message,
          ),
        { timeoutMs: 20_000 },
      ).then((message) => expect(message).toMatch(new RegExp(`stall-consumer: partition ${topic}/${p} has not advanced for \\d+ s with 1 messages behind it`)));
      down = false;
      await waitFor('handled once the database is back', () => handled.includes(1), { timeoutMs: 30_000 });
      await ready.check();
    } finally {
      await consumer.stop();
    }
  }, 60_000);

  it('with the keyed assigner, reads only the partitions of its own keys, where the producers put them', async () => {
    const topic = uniqueTag('keyed-test');
    await ensureTopics(kafka, { [topic]: 16 });
    const mine = 'node-a';
    const others = Array.from({ length: 40 }, (_, i) => `node-${i}`).filter((k) => partitionForKey(k, 16) !== partitionForKey(mine, 16));
    const seen: Array<{ key: string | null; partition: number }> = [];
    const consumer = new BatchConsumer<JobLifecycleMessage>({
      kafka,
      groupId: uniqueTag('group'),
      topic,
      parse: messageParser(JobLifecycleSchema),
      handleBatch: async (items) => {
        seen.push(...items.map((i) => ({ key: i.key, partition: i.partition })));
        return [];
      },
      partitionAssigner: [keyedPartitionAssigner(() => [mine])],
      deadLetters: null,
      logger: silentLogger(),
    });
    await consumer.start();
    try {
      await producer.send(topic, [...others.map((k, i) => lifecycle(i, k)), lifecycle(99, mine)]);
      await waitFor('its own message', () => seen.some((s) => s.key === mine), { timeoutMs: 30_000 });
      expect(seen.every((s) => s.partition === partitionForKey(mine, 16))).toBe(true);
      expect(seen.map((s) => s.key)).toEqual([mine]);
    } finally {
      await consumer.stop();
    }
  }, 60_000);

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
      await producer.send(topic, [lifecycle(at, `k${at}`)]);
      await waitFor(`message ${at} handled`, () => first.includes(at), { timeoutMs: 20_000 });
    }
    await a.stop();

    const second: number[] = [];
    const b = consume(second);
    await b.start();
    try {
      await b.whenJoined(30_000);
      await producer.send(topic, [lifecycle(7, 'k7')]);
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
    await producer.send(
      topic,
      ids.map((at) => lifecycle(at)),
    );
    const handled: number[] = [];
    const groupId = uniqueTag('group');
    // Slow work: 6 calls x 1.2 s outlast the 6 s session; only the heartbeats between calls keep the member.
    const consumer = recordingConsumer(
      topic,
      handled,
      { groupId, sessionTimeoutMs: 6_000, maxItemsPerCall: 10 },
      () => new Promise<void>((r) => setTimeout(r, 1_200)),
    );
    await consumer.start();
    try {
      // An evicted member's commits fail and the batch is redelivered (handled twice), over and over.
      await waitFor(
        'every offset committed',
        () =>
          kafka.withAdmin(async (admin) => {
            const [p] = (await admin.fetchOffsets({ groupId, topics: [topic] }))[0].partitions;
            return p.offset === String(ids.length);
          }),
        { timeoutMs: 60_000 },
      );
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

  it('a request continues the active span (traces exported), not the header it came with', () => {
    const tracer = trace.getTracer('test');
    tracer.startActiveSpan('server', (span) => {
      const sent = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;
      const headers = requestTraceHeaders({ traceparent: sent });
      expect(headers.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
      span.end();
    });
  });
});
