import {
  BeforeApplicationShutdown,
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  OnApplicationShutdown,
  OnModuleDestroy,
  OnModuleInit,
  Provider,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Counter, Histogram } from 'prom-client';
import { CommandSigner, DeadLetterPublisher, KafkaSecurity, OutboxRelay, SIGNATURE_HEADER, WakeUpSender } from '@gantry/messaging';
import { TOPICS } from '@gantry/contracts';
import {
  READINESS_CHECKS,
  ReadinessSource,
  ServiceEnv,
  StatefulServiceEnv,
  createLogger,
  loggerModule,
  opsEndpoints,
  Logger,
  requiredSetting,
} from '@gantry/platform';
import { Consumers } from './consumers';
import { NodeCredentialDirectory } from './node-trust/node-credential-directory';
import { ReadinessRegistry } from './readiness-registry';
import { runDispatchExpander } from './run-dispatch';
import { ClientNeeds, ServiceClients } from './service-clients';
import { COMMAND_SIGNER, CONFIG, KAFKA, KAFKA_PRODUCER, REDIS, SCHEDULER_WAKE, SERVICE_LOGGER } from './tokens';

export interface RuntimeOptions {
  service: string;
  config: ServiceEnv;
  needs: ClientNeeds;
  /** Run an outbox relay in this process (services that write outbox rows; they sign the commands it sends). */
  outboxRelay?: boolean;
  /** Sends agent commands: needs GANTRY_COMMAND_SIGNING_KEY (contract 4.1). */
  sendsCommands?: boolean;
  /** Checks who sent beats and reports: needs GANTRY_NODE_CREDENTIAL_SECRET and provides NodeCredentialDirectory. */
  verifiesNodes?: boolean;
  /** How to authenticate to Kafka instead of the config's KAFKA_SASL_* (a real agent: its node's tokens, ADR 0034). */
  kafkaSecurity?: KafkaSecurity;
}

const outboxPublished = new Counter({ name: 'gantry_outbox_published_total', help: 'Outbox rows published to Kafka' });
const outboxVacuums = new Counter({
  name: 'gantry_outbox_vacuums_total',
  help: 'Vacuums of the outbox table this relay ran (every GANTRY_OUTBOX_VACUUM_ROWS rows published)',
});
const rowsPerPublish = new Histogram({
  name: 'gantry_outbox_rows_per_publish',
  help: 'Outbox rows per relay round (one claim, one Kafka send)',
  buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
});

/** Starts and stops the outbox relay with the app. */
@Injectable()
class OutboxRelayLifecycle implements OnModuleInit, BeforeApplicationShutdown {
  private relay: OutboxRelay | null = null;

  constructor(
    private readonly clients: ServiceClients,
    @Inject(COMMAND_SIGNER) private readonly signer: CommandSigner,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    @Inject(CONFIG) private readonly config: StatefulServiceEnv,
  ) {}

  async onModuleInit(): Promise<void> {
    this.relay = new OutboxRelay({
      dataSource: this.clients.dataSource!,
      producer: this.clients.producer,
      deadLetters: new DeadLetterPublisher(this.clients.producer),
      expanders: [runDispatchExpander],
      signer: { topic: TOPICS.agentCommands, header: SIGNATURE_HEADER, sign: (v) => this.signer.sign(v) },
      logger: this.logger,
      vacuumEveryRows: this.config.GANTRY_OUTBOX_VACUUM_ROWS,
      onVacuumed: () => outboxVacuums.inc(),
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

/** Loads every enrollment before the consumers start, and follows changes while the app runs. */
@Injectable()
class NodeDirectoryLifecycle implements OnModuleInit, OnModuleDestroy {
  constructor(private readonly directory: NodeCredentialDirectory) {}
  async onModuleInit(): Promise<void> {
    await this.directory.start();
  }
  onModuleDestroy(): void {
    this.directory.stop();
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
 * checks over them, /healthz /readyz /metrics, and optionally the outbox relay, the command signer
 * and the directory of enrolled nodes.
 */
@Global()
@Module({})
export class RuntimeModule {
  static forRoot(opts: RuntimeOptions): DynamicModule {
    const ops = opsEndpoints();
    const stateful = opts.config as StatefulServiceEnv;
    // Settings only some services need are checked here, at start-up, naming the variable.
    const signer =
      opts.sendsCommands || opts.outboxRelay
        ? new CommandSigner(requiredSetting(stateful, 'GANTRY_COMMAND_SIGNING_KEY', `${opts.service} signs the commands it sends to agents`))
        : null;
    const nodeSecret = opts.verifiesNodes
      ? requiredSetting(stateful, 'GANTRY_NODE_CREDENTIAL_SECRET', `${opts.service} checks the signatures of what nodes send`)
      : null;
    const providers: Provider[] = [
      { provide: CONFIG, useValue: opts.config },
      { provide: SERVICE_LOGGER, useValue: createLogger(opts.service, opts.config.LOG_LEVEL) },
      { provide: ServiceClients, useFactory: () => ServiceClients.connect(opts.service, opts.config, opts.needs, opts.kafkaSecurity) },
      { provide: KAFKA, useFactory: (c: ServiceClients) => c.kafka, inject: [ServiceClients] },
      { provide: KAFKA_PRODUCER, useFactory: (c: ServiceClients) => c.producer, inject: [ServiceClients] },
      { provide: DataSource, useFactory: (c: ServiceClients) => c.dataSource, inject: [ServiceClients] },
      { provide: REDIS, useFactory: (c: ServiceClients) => c.redis, inject: [ServiceClients] },
      { provide: COMMAND_SIGNER, useValue: signer },
      {
        provide: SCHEDULER_WAKE,
        useFactory: (c: ServiceClients, logger: Logger) => new WakeUpSender(c.producer, logger),
        inject: [ServiceClients, SERVICE_LOGGER],
      },
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
      ...(nodeSecret
        ? [
            {
              provide: NodeCredentialDirectory,
              useFactory: (c: ServiceClients, logger: Logger) => new NodeCredentialDirectory(c.dataSource!, nodeSecret, logger),
              inject: [ServiceClients, SERVICE_LOGGER],
            },
            NodeDirectoryLifecycle,
          ]
        : []),
    ];
    return {
      module: RuntimeModule,
      imports: [loggerModule(opts.service, opts.config.LOG_LEVEL), ...ops.imports],
      controllers: ops.controllers,
      providers,
      exports: [
        CONFIG,
        SERVICE_LOGGER,
        ReadinessRegistry,
        Consumers,
        ServiceClients,
        KAFKA,
        KAFKA_PRODUCER,
        DataSource,
        REDIS,
        READINESS_CHECKS,
        COMMAND_SIGNER,
        SCHEDULER_WAKE,
        ...(nodeSecret ? [NodeCredentialDirectory] : []),
      ],
    };
  }
}
