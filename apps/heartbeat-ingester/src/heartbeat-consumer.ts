import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Kafka, Producer } from 'kafkajs';
import { Counter, Gauge } from 'prom-client';
import { HeartbeatMessage, TOPICS, parseMessage } from '@gantry/contracts';
import { BatchConsumer, DeadLetterPublisher } from '@gantry/messaging';
import { CONFIG, KAFKA, KAFKA_PRODUCER, ReadinessRegistry, SERVICE_LOGGER } from '@gantry/runtime';
import type { Logger } from '@gantry/platform';
import { IngesterEnv } from './config';
import { HeartbeatBatchWriter } from './heartbeat-batch-writer';

const deadLettered = new Counter({ name: 'gantry_heartbeats_dead_lettered_total', help: 'Heartbeats that did not parse or validate' });
const consumerLag = new Gauge({ name: 'gantry_heartbeat_consumer_lag', help: 'Messages behind the partition head, per partition', labelNames: ['partition'] });

/** Consumes gantry.heartbeats.v1 in batches, several partitions at once. */
@Injectable()
export class HeartbeatConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly consumer: BatchConsumer<HeartbeatMessage>;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(KAFKA_PRODUCER) producer: Producer,
    @Inject(SERVICE_LOGGER) logger: Logger,
    @Inject(CONFIG) config: IngesterEnv,
    writer: HeartbeatBatchWriter,
    readiness: ReadinessRegistry,
  ) {
    this.consumer = new BatchConsumer<HeartbeatMessage>({
      kafka,
      groupId: 'gantry-heartbeat-ingester',
      topic: TOPICS.heartbeats,
      fromBeginning: false, // an old beat says nothing about liveness now
      parse: (raw) => parseMessage(HeartbeatMessage, raw),
      handleBatch: async (items) => {
        await writer.write(items.map((i) => i.value));
        return [];
      },
      deadLetters: new DeadLetterPublisher(producer),
      partitionsConsumedConcurrently: config.GANTRY_INGEST_CONCURRENCY,
      logger,
      onBatchDone: (s) => {
        deadLettered.inc(s.deadLettered);
        consumerLag.set({ partition: String(s.partition) }, s.lag);
      },
    });
    readiness.add(this.consumer.readinessCheck('heartbeat-consumer'));
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }
}
