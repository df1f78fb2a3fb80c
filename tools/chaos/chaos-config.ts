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
  basePort: number;
  kafkaPort: number;
  databaseUrl: string;
  redisUrl: string;
  logLevel: string;
}

export function loadChaosConfig(): ChaosConfig {
  const redisDb = num('CHAOS_REDIS_DB', 13);
  if (redisDb >= 1 && redisDb <= 12) throw new Error(`CHAOS_REDIS_DB ${redisDb}: dbs 1-12 belong to the tests and benches`);
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
    only: (process.env.CHAOS_FAULTS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    basePort: num('CHAOS_BASE_PORT', 18800),
    kafkaPort: num('CHAOS_KAFKA_PORT', 59092),
    databaseUrl: process.env.CHAOS_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gantry_chaos',
    redisUrl: `redis://127.0.0.1:6379/${redisDb}`,
    logLevel: process.env.CHAOS_LOG_LEVEL || 'info',
  };
  if (cfg.basePort < 18800 || cfg.basePort + 4 > 18899) throw new Error('CHAOS_BASE_PORT must leave the five services inside 18800-18899');
  if (cfg.jobMaxMs < cfg.jobMinMs) throw new Error('CHAOS_JOB_MAX_MS must be at least CHAOS_JOB_MIN_MS');
  return cfg;
}

/** The only databases the chaos run recreates (drops) at start. */
export const CHAOS_DATABASE = /^gantry_chaos[a-z0-9_]*$/;
