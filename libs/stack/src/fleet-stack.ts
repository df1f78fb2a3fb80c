import { Stack, StackOptions } from './stack';

/** Where a stack's services find Kafka, Postgres and Redis. */
export interface StackInfra {
  kafkaBrokers: string;
  databaseUrl: string;
  redisUrl: string;
}

export interface FleetStackOptions extends Pick<StackOptions, 'root' | 'logDir' | 'basePort' | 'replicas' | 'readyTimeoutMs' | 'kafkaCredentials' | 'secrets'> {
  infra: StackInfra;
  adminToken: string;
  /** Env of every process (timeouts, log level); the infrastructure and the admin token are added. */
  env?: Record<string, string>;
  /** The stack's agent: a simulated fleet (see fleetAgentEnv), plus `env` for it alone. */
  fleet: SimulatedFleet & { env?: Record<string, string> };
  /** Env of one service's processes, beside `env`. */
  serviceEnv?: StackOptions['serviceEnv'];
}

/** A simulated fleet in one agent process: node ids and the agent id are `prefix` (`<prefix>-00042`). */
export interface SimulatedFleet {
  nodes: number;
  prefix: string;
  executor: 'process' | 'sleep';
  /** Where the agent writes job logs. */
  workDir: string;
}

/**
 * The one way a stack of real processes with a simulated fleet is put together: by the end-to-end
 * tests (through @gantry/testing's startTestStack) and by test:chaos. Not started.
 */
export function fleetStack(opts: FleetStackOptions): Stack {
  return new Stack({
    root: opts.root,
    logDir: opts.logDir,
    basePort: opts.basePort,
    replicas: opts.replicas,
    readyTimeoutMs: opts.readyTimeoutMs,
    kafkaCredentials: opts.kafkaCredentials,
    secrets: opts.secrets,
    env: {
      GANTRY_ADMIN_TOKEN: opts.adminToken,
      KAFKA_BROKERS: opts.infra.kafkaBrokers,
      DATABASE_URL: opts.infra.databaseUrl,
      REDIS_URL: opts.infra.redisUrl,
      ...opts.env,
    },
    serviceEnv: {
      ...opts.serviceEnv,
      'node-agent': { ...opts.serviceEnv?.['node-agent'], ...fleetAgentEnv(opts.fleet), ...opts.fleet.env },
    },
  });
}

/**
 * The env of an extra agent process with a simulated fleet of its own (see Stack.extra). Its nodes
 * are on this host (127.0.0.1, also their gangs' MASTER_ADDR) and serve their logs on a port the
 * OS picks, sent in their beats (ADR 0021).
 */
export function fleetAgentEnv(fleet: SimulatedFleet): Record<string, string> {
  return {
    GANTRY_SIM_NODES: String(fleet.nodes),
    GANTRY_SIM_PREFIX: fleet.prefix,
    GANTRY_AGENT_ID: fleet.prefix,
    GANTRY_SIM_EXECUTOR: fleet.executor,
    GANTRY_AGENT_WORKDIR: fleet.workDir,
    GANTRY_NODE_ADDRESS: '127.0.0.1',
    GANTRY_AGENT_LOGS_PORT: '0',
  };
}
