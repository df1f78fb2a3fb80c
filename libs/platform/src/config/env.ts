import 'reflect-metadata';
import { IsIn, IsInt, IsString, Matches, Max, Min } from 'class-validator';
import type { ConfigRules } from './load-config';
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

  applyDerivedDefaults(given: ReadonlySet<string>): void {
    if (!given.has('GANTRY_HEARTBEAT_MS')) this.GANTRY_HEARTBEAT_MS = defaultHeartbeatMs(this.GANTRY_NODE_SUSPECT_MS);
  }

  problems(given: ReadonlySet<string>): string[] {
    return timingProblems(this, given);
  }
}

/** Services that keep state: Postgres and Redis as well. */
export class StatefulServiceEnv extends ServiceEnv {
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// connection string' })
  DATABASE_URL: string = 'postgres://postgres@127.0.0.1:5432/gantry';
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// URL' })
  REDIS_URL: string = 'redis://127.0.0.1:6379';
  /** Postgres connections per process. */
  @IsInt() @Min(1) @Max(200) GANTRY_DB_POOL_SIZE: number = 10;
}
