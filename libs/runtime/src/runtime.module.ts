import { BeforeApplicationShutdown, DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown, OnModuleInit, Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Counter, Histogram } from 'prom-client';
import { OutboxRelay } from '@gantry/messaging';
import { READINESS_CHECKS, ReadinessSource, ServiceEnv, StatefulServiceEnv, createLogger, loggerModule, opsEndpoints, Logger } from '@gantry/platform';
import { Consumers } from './consumers';
import { ReadinessRegistry } from './readiness-registry';
import { ClientNeeds, ServiceClients } from './service-clients';
import { KAFKA, KAFKA_PRODUCER, REDIS, SERVICE_LOGGER } from './tokens';

export interface RuntimeOptions {
  service: string;
  config: ServiceEnv;
  needs: ClientNeeds;
  /** Run an outbox relay in this process (services that write outbox rows). */
  outboxRelay?: boolean;
}

export const CONFIG = Symbol('CONFIG');


const outboxPublished = new Counter({ name: 'gantry_outbox_published_total', help: 'Outbox rows published to Kafka' });
const rowsPerPublish = new Histogram({ name: 'gantry_outbox_rows_per_publish', help: 'Outbox rows per relay round (one claim, one Kafka send)', buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500] });

/** Starts and stops the outbox relay with the app. */
@Injectable()
class OutboxRelayLifecycle implements OnModuleInit, BeforeApplicationShutdown {
  private relay: OutboxRelay | null = null;

  constructor(
    private readonly clients: ServiceClients,
    @Inject(CONFIG) private readonly config: StatefulServiceEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    this.relay = new OutboxRelay({
      dataSource: this.clients.dataSource!,
      producer: this.clients.producer,
      logger: this.logger,
      onPublished: (n) => {
        outboxPublished.inc(n);
        rowsPerPublish.observe(n);
      },
    });
    await this.relay.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.relay?.stop();
  }
}

/**
 * Shutdown runs in three phases: apps stop their loops (onModuleDestroy), consumers and the relay
 * stop (beforeApplicationShutdown), then clients close (onApplicationShutdown).
 */
@Injectable()
class ClientsLifecycle implements OnApplicationShutdown {
  constructor(private readonly clients: ServiceClients) {}
  async onApplicationShutdown(): Promise<void> {
    await this.clients.close();
  }
}

/**
 * Everything a Gantry service shares: config, logger, Kafka/Postgres/Redis clients, readiness
 * checks over them, /healthz /readyz /metrics, and optionally the outbox relay.
 */
@Global()
@Module({})
export class RuntimeModule {
  static forRoot(opts: RuntimeOptions): DynamicModule {
    const ops = opsEndpoints();
    const providers: Provider[] = [
      { provide: CONFIG, useValue: opts.config },
      { provide: SERVICE_LOGGER, useValue: createLogger(opts.service, opts.config.LOG_LEVEL) },
      { provide: ServiceClients, useFactory: () => ServiceClients.connect(opts.service, opts.config, opts.needs) },
      { provide: KAFKA, useFactory: (c: ServiceClients) => c.kafka, inject: [ServiceClients] },
      { provide: KAFKA_PRODUCER, useFactory: (c: ServiceClients) => c.producer, inject: [ServiceClients] },
      { provide: DataSource, useFactory: (c: ServiceClients) => c.dataSource, inject: [ServiceClients] },
      { provide: REDIS, useFactory: (c: ServiceClients) => c.redis, inject: [ServiceClients] },
      ReadinessRegistry,
      Consumers,
      {
        provide: READINESS_CHECKS,
        // Read on every probe, so checks registered after start-up are included.
        useFactory: (c: ServiceClients, registry: ReadinessRegistry): ReadinessSource => {
          const base = c.readinessChecks();
          return { checks: () => [...base, ...registry.checks] };
        },
        inject: [ServiceClients, ReadinessRegistry],
      },
      ClientsLifecycle,
      ...(opts.outboxRelay ? [OutboxRelayLifecycle] : []),
    ];
    return {
      module: RuntimeModule,
      imports: [loggerModule(opts.service, opts.config.LOG_LEVEL), ...ops.imports],
      controllers: ops.controllers,
      providers,
      exports: [CONFIG, SERVICE_LOGGER, ReadinessRegistry, Consumers, ServiceClients, KAFKA, KAFKA_PRODUCER, DataSource, REDIS, READINESS_CHECKS],
    };
  }
}
