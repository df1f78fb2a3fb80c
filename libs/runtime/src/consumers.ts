import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { BatchConsumer, BatchConsumerOptions, DeadLetterPublisher, KafkaConnection, MessageProducer } from '@gantry/messaging';
import type { Logger, ServiceEnv } from '@gantry/platform';
import { ReadinessRegistry } from './readiness-registry';
import { CONFIG, KAFKA, KAFKA_PRODUCER, SERVICE_LOGGER } from './tokens';

export type ConsumerSpec<T> = Omit<BatchConsumerOptions<T>, 'kafka' | 'deadLetters' | 'logger' | 'stallMs'> & {
  /** A reader that may not, or need not, write the dead-letter topic (agents; a second reader of a topic). */
  noDeadLetters?: boolean;
};

/**
 * Creates a service's Kafka consumers with the shared wiring (client, dead letters, logger, stall
 * time), makes each part of /readyz, starts them when the app has booted and stops them first on
 * shutdown.
 */
@Injectable()
export class Consumers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly all: BatchConsumer<unknown>[] = [];
  private readonly deadLetters: DeadLetterPublisher;

  constructor(
    @Inject(KAFKA) private readonly kafka: KafkaConnection,
    @Inject(KAFKA_PRODUCER) producer: MessageProducer,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    @Inject(CONFIG) private readonly config: ServiceEnv,
    private readonly readiness: ReadinessRegistry,
  ) {
    this.deadLetters = new DeadLetterPublisher(producer);
  }

  create<T>(name: string, spec: ConsumerSpec<T>): BatchConsumer<T> {
    const { noDeadLetters, ...options } = spec;
    const consumer = new BatchConsumer<T>({
      ...options,
      kafka: this.kafka,
      deadLetters: noDeadLetters ? null : this.deadLetters,
      logger: this.logger,
      stallMs: this.config.GANTRY_CONSUMER_STALL_MS,
    });
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
