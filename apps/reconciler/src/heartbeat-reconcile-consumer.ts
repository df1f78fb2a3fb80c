import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Kafka, Producer } from 'kafkajs';
import { HeartbeatMessage, TOPICS, parseMessage } from '@gantry/contracts';
import { BatchConsumer, DeadLetterPublisher } from '@gantry/messaging';
import { KAFKA, KAFKA_PRODUCER, ReadinessRegistry, SERVICE_LOGGER } from '@gantry/runtime';
import type { Logger } from '@gantry/platform';
import { NodeReconciler } from './node-reconciler';

/**
 * The reconciler's own read of gantry.heartbeats.v1 (a separate consumer group from the ingester's):
 * every beat is a chance to repair what the node lacks. Bad messages are dead-lettered by the ingester,
 * so they are only skipped here.
 */
@Injectable()
export class HeartbeatReconcileConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly consumer: BatchConsumer<HeartbeatMessage>;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(KAFKA_PRODUCER) producer: Producer,
    @Inject(SERVICE_LOGGER) logger: Logger,
    reconciler: NodeReconciler,
    readiness: ReadinessRegistry,
  ) {
    this.consumer = new BatchConsumer<HeartbeatMessage>({
      kafka,
      groupId: 'gantry-reconciler-heartbeats',
      topic: TOPICS.heartbeats,
      fromBeginning: false,
      parse: (raw) => parseMessage(HeartbeatMessage, raw),
      handleBatch: async (items) => {
        await reconciler.reconcile(items.map((i) => i.value));
        return [];
      },
      deadLetters: new DeadLetterPublisher(producer),
      skipDeadLetters: true,
      partitionsConsumedConcurrently: 4,
      logger,
    });
    readiness.add(this.consumer.readinessCheck('heartbeat-reconcile-consumer'));
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }
}
