import { Kafka, logLevel, Partitioners } from 'kafkajs';

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
}

/** One Kafka client per process; quiet logs (kafkajs logs every rebalance at INFO). */
export function createKafka(opts: KafkaClientOptions): Kafka {
  return new Kafka({
    clientId: opts.clientId,
    brokers: opts.brokers,
    logLevel: logLevel.WARN,
    retry: { initialRetryTime: 200, retries: 10 },
  });
}

/** The partitioner kafkajs 2.x defaults to (Java-compatible murmur2), named to silence its warning. */
export const DEFAULT_PARTITIONER = Partitioners.DefaultPartitioner;
