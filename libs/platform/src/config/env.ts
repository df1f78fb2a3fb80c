import 'reflect-metadata';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, ValidateIf } from 'class-validator';
import { ConfigError, type ConfigRules } from './load-config';
import { defaultHeartbeatMs, timingProblems } from './timings';

const BROKER_LIST = /^[^,\s]+:\d+(,[^,\s]+:\d+)*$/;

/** Every service: where it listens and where Kafka is, and the timings every service shares (see timings.ts). */
export class ServiceEnv implements ConfigRules {
  /** Port for HTTP (the API on the gateway; /healthz, /readyz and /metrics everywhere). */
  @IsInt() @Min(1) @Max(65535) GANTRY_HTTP_PORT: number = 8080;
  /** Interface to bind; 127.0.0.1 in dev, 0.0.0.0 in a container. */
  @IsString() GANTRY_HTTP_HOST: string = '127.0.0.1';
  /** Comma-separated host:port list. */
  @Matches(BROKER_LIST, { message: 'KAFKA_BROKERS must be a comma-separated list of host:port' })
  KAFKA_BROKERS: string = '127.0.0.1:9092';
  /**
   * SASL mechanism to authenticate to Kafka with (contract 4.1); unset: no SASL. `oauthbearer` is a
   * real node agent's alone: it connects as its node's principal with tokens from the gateway (ADR 0034).
   */
  @IsOptional() @IsIn(['scram-sha-512', 'scram-sha-256', 'plain', 'oauthbearer']) KAFKA_SASL_MECHANISM?:
    'scram-sha-512' | 'scram-sha-256' | 'plain' | 'oauthbearer';
  /** This process's Kafka principal and its password; required with a KAFKA_SASL_MECHANISM other than oauthbearer. */
  @ValidateIf((e: ServiceEnv) => e.KAFKA_SASL_MECHANISM !== undefined && e.KAFKA_SASL_MECHANISM !== 'oauthbearer')
  @IsString()
  @MinLength(1, { message: 'KAFKA_SASL_USERNAME is required when KAFKA_SASL_MECHANISM is set' })
  KAFKA_SASL_USERNAME?: string;
  /** The password of KAFKA_SASL_USERNAME; required with it. */
  @ValidateIf((e: ServiceEnv) => e.KAFKA_SASL_MECHANISM !== undefined && e.KAFKA_SASL_MECHANISM !== 'oauthbearer')
  @IsString()
  @MinLength(1, { message: 'KAFKA_SASL_PASSWORD is required when KAFKA_SASL_MECHANISM is set' })
  KAFKA_SASL_PASSWORD?: string;
  /** TLS to the brokers. */
  @IsIn(['true', 'false']) KAFKA_SSL: 'true' | 'false' = 'false';
  /** A CA certificate (PEM file) to trust for the brokers' TLS, besides the system's. */
  @IsOptional() @IsString() KAFKA_SSL_CA_FILE?: string;
  /** A consumer partition with messages behind it that has not advanced for this long makes /readyz fail, ms. */
  @IsInt() @Min(1000) GANTRY_CONSUMER_STALL_MS: number = 30000;
  /** pino level. HTTP request logs exist only at debug and trace; above that a 5xx is logged once, with its error id, method and URL. */
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) LOG_LEVEL: string = 'info';
  /** Heartbeat period of agents, ms; default a third of GANTRY_NODE_SUSPECT_MS (5000 at its default). */
  @IsInt() @Min(100) GANTRY_HEARTBEAT_MS: number = 5000;
  /** Heartbeat silence after which a node gets no new placements, ms. */
  @IsInt() @Min(100) GANTRY_NODE_SUSPECT_MS: number = 15000;
  /** Heartbeat silence after which a node's attempts are failed, ms. */
  @IsInt() @Min(100) GANTRY_NODE_DEAD_MS: number = 40000;

  get kafkaBrokers(): string[] {
    return this.KAFKA_BROKERS.split(',');
  }

  /**
   * How this process authenticates to Kafka (the shape of messaging's KafkaSecurity). With
   * `oauthbearer` there is no SASL here: the agent supplies its token source (runtime's kafkaSecurity).
   */
  get kafkaSecurity(): { sasl?: { mechanism: 'scram-sha-512' | 'scram-sha-256' | 'plain'; username: string; password: string }; ssl?: { caFile?: string } } {
    const m = this.KAFKA_SASL_MECHANISM;
    return {
      ...(m && m !== 'oauthbearer' ? { sasl: { mechanism: m, username: this.KAFKA_SASL_USERNAME!, password: this.KAFKA_SASL_PASSWORD! } } : {}),
      ...(this.KAFKA_SSL === 'true' ? { ssl: this.KAFKA_SSL_CA_FILE ? { caFile: this.KAFKA_SSL_CA_FILE } : {} } : {}),
    };
  }

  applyDerivedDefaults(given: ReadonlySet<string>): void {
    if (!given.has('GANTRY_HEARTBEAT_MS')) this.GANTRY_HEARTBEAT_MS = defaultHeartbeatMs(this.GANTRY_NODE_SUSPECT_MS);
  }

  problems(given: ReadonlySet<string>): string[] {
    return timingProblems(this, given);
  }
}

/** Services that keep state: Postgres and Redis as well. */
export class StatefulServiceEnv extends ServiceEnv {
  /** Postgres connection string. */
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// connection string' })
  DATABASE_URL: string = 'postgres://postgres@127.0.0.1:5432/gantry';
  /** Redis URL (`rediss://` for TLS). */
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// URL' })
  REDIS_URL: string = 'redis://127.0.0.1:6379';
  /** Postgres connections per process. */
  @IsInt() @Min(1) @Max(200) GANTRY_DB_POOL_SIZE: number = 10;
  /**
   * Ed25519 private key (PEM, PKCS#8) that signs agent commands (contract 4.1). Required by the
   * services that send commands: gateway, scheduler, reconciler.
   */
  @IsOptional()
  @Matches(/-----BEGIN PRIVATE KEY-----/, { message: 'GANTRY_COMMAND_SIGNING_KEY must be a PEM (PKCS#8) Ed25519 private key' })
  GANTRY_COMMAND_SIGNING_KEY?: string;
  /**
   * The secret every node credential is derived from (HMAC-SHA256(secret, node id and generation)).
   * Required by the services that enroll nodes or verify what they send: gateway, heartbeat-ingester,
   * reconciler. At least 32 characters.
   */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'GANTRY_NODE_CREDENTIAL_SECRET must be at least 32 characters' })
  GANTRY_NODE_CREDENTIAL_SECRET?: string;
  /** A heartbeat's sentAt or a report's at further than this from the broker's receive time is refused, ms. */
  @IsInt() @Min(1000) GANTRY_CLOCK_SKEW_MS: number = 30000;
  /** Longest a Postgres statement may run (statement_timeout; lock waits included), ms. */
  @IsInt() @Min(100) GANTRY_DB_STATEMENT_TIMEOUT_MS: number = 10_000;
  /** Longest wait for a pooled Postgres connection, or for a new one to open, ms. */
  @IsInt() @Min(100) GANTRY_DB_ACQUIRE_TIMEOUT_MS: number = 5_000;
  /**
   * The outbox relay vacuums the outbox table after every this many rows it published, so that
   * claims do not walk the dead entries of rows already sent (autovacuum runs a table at most once
   * a minute). 0: never (autovacuum alone).
   */
  @IsInt() @Min(0) GANTRY_OUTBOX_VACUUM_ROWS: number = 2000;
  /** Longest wait for a Redis command's answer (ioredis commandTimeout), ms. */
  @IsInt() @Min(100) GANTRY_REDIS_COMMAND_TIMEOUT_MS: number = 5_000;
}

/** A setting a service needs although others may go without it; the error names the variable. */
export function requiredSetting<T extends object, K extends keyof T & string>(config: T, name: K, why: string): NonNullable<T[K]> {
  const v = config[name];
  if (v === undefined || v === null || v === '') throw new ConfigError([`${name} is required: ${why}`]);
  return v as NonNullable<T[K]>;
}
