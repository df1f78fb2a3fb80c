import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Kafka, Producer } from 'kafkajs';
import { BatchConsumer, BatchConsumerOptions, DeadLetterPublisher } from '@gantry/messaging';
import type { Logger } from '@gantry/platform';
import { ReadinessRegistry } from './readiness-registry';
import { KAFKA, KAFKA_PRODUCER, SERVICE_LOGGER } from './tokens';

export type ConsumerSpec<T> = Omit<BatchConsumerOptions<T>, 'kafka' | 'deadLetters' | 'logger'>;

/**
 * Creates a service's Kafka consumers with the shared wiring (client, dead letters, logger), makes
 * each part of /readyz, starts them when the app has booted and stops them first on shutdown.
 */
@Injectable()
export class Consumers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly all: BatchConsumer<unknown>[] = [];
  private readonly deadLetters: DeadLetterPublisher;

  constructor(
    @Inject(KAFKA) private readonly kafka: Kafka,
    @Inject(KAFKA_PRODUCER) producer: Producer,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    private readonly readiness: ReadinessRegistry,
  ) {
    this.deadLetters = new DeadLetterPublisher(producer);
  }

  create<T>(name: string, spec: ConsumerSpec<T>): BatchConsumer<T> {
    const consumer = new BatchConsumer<T>({ ...spec, kafka: this.kafka, deadLetters: this.deadLetters, logger: this.logger });
    this.readiness.add(consumer.readinessCheck(name));
    this.all.push(consumer as BatchConsumer<unknown>);
    return consumer;
  }

  async onApplicationBootstrap(): Promise<void> {
    await Promise.all(this.all.map((c) => c.start()));
  }

  /** Before clients close (onApplicationShutdown), after the app stopped its own loops (onModuleDestroy). */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.all.map((c) => c.stop()));
  }
}
