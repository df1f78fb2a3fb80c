import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Kafka, Producer } from 'kafkajs';
import { JobLifecycleMessage, TOPICS, parseMessage } from '@gantry/contracts';
import { BatchConsumer, DeadLetterPublisher } from '@gantry/messaging';
import { KAFKA, KAFKA_PRODUCER, ReadinessRegistry, SERVICE_LOGGER } from '@gantry/runtime';
import type { Logger } from '@gantry/platform';
import { SchedulingLoop } from './scheduling-loop';

/** Wakes the scheduling loop when a job is created or capacity is freed, instead of waiting for the next tick. */
@Injectable()
export class LifecycleWakeConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly consumer: BatchConsumer<JobLifecycleMessage>;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(KAFKA_PRODUCER) producer: Producer,
    @Inject(SERVICE_LOGGER) logger: Logger,
    loop: SchedulingLoop,
    readiness: ReadinessRegistry,
  ) {
    this.consumer = new BatchConsumer<JobLifecycleMessage>({
      kafka,
      groupId: 'gantry-scheduler',
      topic: TOPICS.jobLifecycle,
      fromBeginning: false, // a missed wake-up is harmless: the loop also ticks
      parse: (raw) => parseMessage(JobLifecycleMessage, raw),
      handleBatch: async () => {
        loop.poke();
        return [];
      },
      deadLetters: new DeadLetterPublisher(producer),
      logger,
    });
    readiness.add(this.consumer.readinessCheck('lifecycle-consumer'));
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
  }
}
