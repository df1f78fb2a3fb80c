import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { KafkaConnection, KafkaSecurity, MessageProducer, createKafka } from '@gantry/messaging';
import { createDataSource } from '@gantry/persistence';
import { ConfigError, ReadinessCheck, ServiceEnv, StatefulServiceEnv } from '@gantry/platform';

export interface ClientNeeds {
  postgres: boolean;
  redis: boolean;
}

/** The connections one service process holds, opened at start and closed last at shutdown. */
export class ServiceClients {
  private constructor(
    readonly kafka: KafkaConnection,
    readonly producer: MessageProducer,
    readonly dataSource: DataSource | null,
    readonly redis: Redis | null,
  ) {}

  /** `security`: how to authenticate instead of config.kafkaSecurity (a real agent's token source). */
  static async connect(service: string, config: ServiceEnv, needs: ClientNeeds, security?: KafkaSecurity): Promise<ServiceClients> {
    if (config.KAFKA_SASL_MECHANISM === 'oauthbearer' && !security?.sasl) {
      throw new ConfigError([
        `KAFKA_SASL_MECHANISM=oauthbearer is for a real node agent (GANTRY_SIM_NODES=0), which gets its tokens from the gateway; ${service} connects with scram-sha-512, scram-sha-256 or plain`,
      ]);
    }
    const kafka = createKafka({ brokers: config.kafkaBrokers, clientId: service, security: security ?? config.kafkaSecurity });
    const stateful = config as StatefulServiceEnv;
    const dataSource = needs.postgres
      ? createDataSource({
          url: stateful.DATABASE_URL,
          poolSize: stateful.GANTRY_DB_POOL_SIZE,
          applicationName: service,
          statementTimeoutMs: stateful.GANTRY_DB_STATEMENT_TIMEOUT_MS,
          acquireTimeoutMs: stateful.GANTRY_DB_ACQUIRE_TIMEOUT_MS,
        })
      : null;
    const redis = needs.redis
      ? new Redis(stateful.REDIS_URL, {
          lazyConnect: true,
          maxRetriesPerRequest: 3,
          enableAutoPipelining: true,
          commandTimeout: stateful.GANTRY_REDIS_COMMAND_TIMEOUT_MS,
          connectTimeout: stateful.GANTRY_REDIS_COMMAND_TIMEOUT_MS,
        })
      : null;
    const [producer] = await Promise.all([kafka.connectProducer(), dataSource?.initialize(), redis?.connect()]);
    return new ServiceClients(kafka, producer, dataSource, redis);
  }

  readinessChecks(): ReadinessCheck[] {
    const checks: ReadinessCheck[] = [this.kafka.readinessCheck()];
    if (this.dataSource) {
      const ds = this.dataSource;
      checks.push({ name: 'postgres', check: async () => void (await ds.query('SELECT 1')) });
    }
    if (this.redis) {
      const redis = this.redis;
      checks.push({ name: 'redis', check: async () => void (await redis.ping()) });
    }
    return checks;
  }

  async close(): Promise<void> {
    await this.kafka.disconnect();
    await this.dataSource?.destroy().catch(() => undefined);
    this.redis?.disconnect();
  }
}
