/** Settings of `npm run test:chaos`, each overridable by a CHAOS_* variable. Times in the unit named. */
import { numberFromEnv as num } from '@gantry/stack';

export interface ChaosConfig {
  /** Simulated nodes in the one agent process (the fleet). */
  simNodes: number;
  /** Jobs per second the load generator submits through the gateway. */
  ratePerS: number;
  /** Creates that may be waiting for an answer at once; beyond this the generator skips a tick (counted). */
  maxInFlight: number;
  /** Each job sleeps a uniform draw from [min, max] ms on its node (the agent's `sleep` executor). */
  jobMinMs: number;
  jobMaxMs: number;
  /** Retries each job gets after an attempt is lost (a fault may lose a running attempt). */
  maxRetries: number;
  /** Steady load before the first fault, s. */
  warmupS: number;
  /** Steady load after each recovery before the next fault, s (see run.ts for why a pause). */
  settleS: number;
  /** How long one fault may take to recover before it is recorded as not recovered, s. */
  recoveryTimeoutS: number;
  /** How long the stack may take to finish every job once the load stops, s. */
  drainTimeoutS: number;
  /** Comma-separated fault names to run (default: all, in the standard order). */
  only: string[];
  /** Gateway and scheduler processes (each fault that names one hits the first; the rolling restart hits every gateway). */
  gateways: number;
  schedulers: number;
  /** Creates per second this stack sustains on this machine; the overload fault offers `overloadFactor` times it, open-loop, for `overloadS`. */
  sustainableRate: number;
  overloadFactor: number;
  overloadS: number;
  /** A hostile tenant submits one job this often, ms, to a real sandboxed agent of its own (hostile-tenant.ts); 0: no tenant. */
  hostileIntervalMs: number;
  /** The same-run pgbench baseline before the services start (one client, single-row INSERTs), s; 0: none. */
  pgbenchS: number;
  /** Moves every port below (CHAOS_PORT_OFFSET, else GANTRY_TEST_PORT_OFFSET), so two checkouts can run side by side. */
  portOffset: number;
  basePort: number;
  kafkaPort: number;
  /** The run's own Postgres cluster (initdb, pg_ctl) on this port, when `ownPostgres`; else `databaseUrl` names a shared one and there is no Postgres restart. */
  ownPostgres: boolean;
  postgresPort: number;
  databaseUrl: string;
  /** The run's own redis-server on this port (restarted by the Redis restart fault). */
  redisPort: number;
  redisUrl: string;
  logLevel: string;
}

/** Where the run looks for initdb and pg_ctl (Debian's Postgres 15 packages). */
export const POSTGRES_BIN = process.env.CHAOS_POSTGRES_BIN || '/usr/lib/postgresql/15/bin';

export function loadChaosConfig(ownPostgresAvailable: boolean): ChaosConfig {
  const portOffset = num('CHAOS_PORT_OFFSET', num('GANTRY_TEST_PORT_OFFSET', 0));
  const redisDb = num('CHAOS_REDIS_DB', 13);
  const given = process.env.CHAOS_DATABASE_URL;
  const ownPostgres = !given && ownPostgresAvailable;
  const postgresPort = num('CHAOS_POSTGRES_PORT', 55432 + portOffset);
  const redisPort = num('CHAOS_REDIS_PORT', 56379 + portOffset);
  const cfg: ChaosConfig = {
    simNodes: num('CHAOS_SIM_NODES', 60),
    ratePerS: num('CHAOS_RATE', 20),
    maxInFlight: num('CHAOS_MAX_IN_FLIGHT', 400),
    jobMinMs: num('CHAOS_JOB_MIN_MS', 1000),
    jobMaxMs: num('CHAOS_JOB_MAX_MS', 4000),
    maxRetries: num('CHAOS_MAX_RETRIES', 3),
    warmupS: num('CHAOS_WARMUP_S', 20),
    settleS: num('CHAOS_SETTLE_S', 15),
    recoveryTimeoutS: num('CHAOS_RECOVERY_TIMEOUT_S', 120),
    drainTimeoutS: num('CHAOS_DRAIN_TIMEOUT_S', 240),
    only: (process.env.CHAOS_FAULTS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    gateways: num('CHAOS_GATEWAYS', 2),
    schedulers: num('CHAOS_SCHEDULERS', 2),
    sustainableRate: num('CHAOS_SUSTAINABLE_RATE', 100),
    overloadFactor: num('CHAOS_OVERLOAD_FACTOR', 5),
    overloadS: num('CHAOS_OVERLOAD_S', 30),
    hostileIntervalMs: num('CHAOS_HOSTILE_INTERVAL_MS', 2000),
    pgbenchS: num('CHAOS_PGBENCH_S', 10),
    portOffset,
    basePort: num('CHAOS_BASE_PORT', 18800 + portOffset),
    kafkaPort: num('CHAOS_KAFKA_PORT', 59092 + portOffset),
    ownPostgres,
    postgresPort,
    databaseUrl: given || (ownPostgres ? `postgres://postgres@127.0.0.1:${postgresPort}/gantry_chaos` : 'postgres://postgres@127.0.0.1:5432/gantry_chaos'),
    redisPort,
    redisUrl: `redis://127.0.0.1:${redisPort}/${redisDb}`,
    logLevel: process.env.CHAOS_LOG_LEVEL || 'info',
  };
  const lo = 18800 + portOffset;
  const processes = 5 + (cfg.gateways - 1) + (cfg.schedulers - 1);
  if (cfg.basePort < lo || cfg.basePort + processes - 1 > lo + 99)
    throw new Error(`CHAOS_BASE_PORT must leave the ${processes} services inside ${lo}-${lo + 99} (18800-18899 moved by the port offset)`);
  if (cfg.gateways < 1 || cfg.schedulers < 1) throw new Error('CHAOS_GATEWAYS and CHAOS_SCHEDULERS must be at least 1');
  if (cfg.jobMaxMs < cfg.jobMinMs) throw new Error('CHAOS_JOB_MAX_MS must be at least CHAOS_JOB_MIN_MS');
  if (cfg.overloadFactor <= 1) throw new Error('CHAOS_OVERLOAD_FACTOR must be above 1: it multiplies the sustainable rate');
  return cfg;
}

/** The only databases the chaos run recreates (drops) at start. */
export const CHAOS_DATABASE = /^gantry_chaos[a-z0-9_]*$/;
