import { readFileSync } from 'node:fs';
import { Admin, Consumer, ConsumerConfig, Kafka, KafkaConfig, logLevel, Producer, SASLOptions } from 'kafkajs';
import { KAFKA_TIMEOUTS } from './kafka-timeouts';
import { javaCompatiblePartitioner } from './partitioning';
import { OutgoingMessage, TopicMessages } from './message';

export type SaslMechanism = 'scram-sha-512' | 'scram-sha-256' | 'plain';

/**
 * SASL/OAUTHBEARER (a real agent, ADR 0034): kafkajs asks for a token each time a connection
 * authenticates, again before the session the broker granted ends; `token` returns one with
 * enough life left (a cached one, or a fresh one from the gateway).
 */
export interface OAuthBearerSasl {
  mechanism: 'oauthbearer';
  token: () => Promise<string>;
}

/** How a client proves who it is to the brokers (contract 4.1): SASL, and TLS where configured. */
export interface KafkaSecurity {
  sasl?: { mechanism: SaslMechanism; username: string; password: string } | OAuthBearerSasl;
  /** TLS to the brokers; `caFile` (PEM) is trusted besides Node's default CAs. */
  ssl?: { caFile?: string };
}

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  security?: KafkaSecurity;
}

/** Sends messages; one per process, shared by everything in it. */
export interface MessageProducer {
  send(topic: string, messages: OutgoingMessage[]): Promise<void>;
  sendBatch(batches: TopicMessages[]): Promise<void>;
}

/** The kafkajs settings of a client (exported for tests that drive kafkajs's internals, e.g. a hostile group client). */
export function kafkaConfig(opts: KafkaClientOptions): KafkaConfig {
  const config: KafkaConfig = {
    clientId: opts.clientId,
    brokers: opts.brokers,
    logLevel: logLevel.WARN,
    // Every Kafka call is bounded (kafka-timeouts.ts); kafkajs retries retriable failures itself
    // (10 tries from 200 ms), then the caller sees the error.
    ...KAFKA_TIMEOUTS,
    retry: { initialRetryTime: 200, retries: 10 },
  };
  const { sasl, ssl } = opts.security ?? {};
  if (sasl?.mechanism === 'oauthbearer') {
    const { token } = sasl;
    config.sasl = { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: await token() }) };
  } else if (sasl) config.sasl = { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } as SASLOptions;
  if (ssl) config.ssl = ssl.caFile ? { ca: [readFileSync(ssl.caFile, 'utf8')] } : true;
  return config;
}

/**
 * The one place a Kafka client is built (contract 4.1: authenticated, TLS where configured). Apps
 * never see kafkajs: they send through a MessageProducer and consume through BatchConsumer.
 */
export class KafkaConnection {
  private readonly kafka: Kafka;
  private sharedProducer: Producer | null = null;

  constructor(readonly opts: KafkaClientOptions) {
    this.kafka = new Kafka(kafkaConfig(opts));
  }

  /** The process's producer (Java-compatible murmur2 partitioner, javaCompatiblePartitioner: commands land where agents look). */
  async connectProducer(): Promise<MessageProducer> {
    if (!this.sharedProducer) {
      // Few retries of its own: callers retry what is transient themselves (the relay's loop, the
      // agents' queues), and a refusal that is not (an unknown topic) must reach them in seconds,
      // not after minutes of kafkajs's backoff.
      this.sharedProducer = this.kafka.producer({
        createPartitioner: javaCompatiblePartitioner,
        allowAutoTopicCreation: false,
        retry: { initialRetryTime: 200, maxRetryTime: 2_000, retries: 5 },
      });
      await this.sharedProducer.connect();
    }
    return producerOf(this.sharedProducer);
  }

  /** For BatchConsumer only. */
  rawConsumer(config: ConsumerConfig): Consumer {
    return this.kafka.consumer(config);
  }

  /** Runs `fn` with a connected admin client. */
  async withAdmin<T>(fn: (admin: Admin) => Promise<T>): Promise<T> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      return await fn(admin);
    } finally {
      await admin.disconnect();
    }
  }

  /** Ready when the cluster answers a metadata request with this client's credentials. */
  readinessCheck(): { name: string; check(): Promise<void> } {
    const admin = this.kafka.admin();
    let connected = false;
    return {
      name: 'kafka',
      check: async () => {
        if (!connected) {
          await admin.connect();
          connected = true;
        }
        await admin.describeCluster();
      },
    };
  }

  async disconnect(): Promise<void> {
    await this.sharedProducer?.disconnect().catch(() => undefined);
    this.sharedProducer = null;
  }
}

function producerOf(p: Producer): MessageProducer {
  return {
    send: async (topic, messages) => void (await p.send({ topic, messages })),
    sendBatch: async (batches) => void (await p.sendBatch({ topicMessages: batches })),
  };
}

export function createKafka(opts: KafkaClientOptions): KafkaConnection {
  return new KafkaConnection(opts);
}
