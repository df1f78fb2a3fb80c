/** bench:dispatch settings, from BENCH_* variables; defaults are the full run. */
import { numberFromEnv as num } from '@gantry/stack';

function load() {
  const nodes = num('BENCH_NODES', 50000);
  // 50,000 nodes beating every 5 s is 10,000 beats/s, more than this 2-core machine ingests next to
  // anything else (bench:heartbeats, docs/benchmarks/history/heartbeats.md). A slower beat keeps the fleet's cost small
  // so the bench measures dispatch; suspect/dead scale with it so that every node stays HEALTHY.
  const heartbeatMs = num('BENCH_HEARTBEAT_MS', 60000);
  return {
    nodes,
    heartbeatMs,
    nodeSuspectMs: num('BENCH_NODE_SUSPECT_MS', Math.round(heartbeatMs * 2.5)),
    nodeDeadMs: num('BENCH_NODE_DEAD_MS', heartbeatMs * 4),
    /** Which phases run, in this order: gang (peak memory), curve (open-loop rates), rate (phase 1), backlog (phase 2), preemption. */
    phases: (process.env.BENCH_PHASES || 'rate,backlog')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
    /** The gang phase: ranks of the one big gang (at most 1,024, the API's limit). */
    gangRanks: num('BENCH_GANG_RANKS', 1024),
    /** The open-loop curve: submit -> RUN at each rate (jobs/s), counted after a warm-up per step. */
    curveRates: (process.env.BENCH_CURVE_RATES || '1,10,50,100,250,500,750').split(',').map(Number),
    curveWarmupS: num('BENCH_CURVE_WARMUP_S', 10),
    curveMeasureS: num('BENCH_CURVE_S', 30),
    curveSettleS: num('BENCH_CURVE_SETTLE_S', 30),
    /** The same-run pgbench baseline (one client, before the services start), seconds; 0: none. */
    pgbenchS: num('BENCH_PGBENCH_S', 10),
    /** Before the curve: open-loop rounds at this rate until the broker's JIT is quiet (stack-warmup.ts); 0 or a max of 0 s: none. */
    curveWarmRate: num('BENCH_CURVE_WARM_RATE', 250),
    curveWarmRoundS: num('BENCH_CURVE_WARM_ROUND_S', 10),
    brokerWarmupMaxS: num('BENCH_BROKER_WARMUP_MAX_S', 120),
    brokerJitQuiet: num('BENCH_BROKER_JIT_QUIET', 0.02),
    /** Open-loop phases (curve, phase 1): sockets the client may hold at once, its concurrency ceiling. */
    openLoopSockets: num('BENCH_OPEN_LOOP_SOCKETS', 512),
    /** Phase 1: submissions per second through the gateway, for how long, over how many connections. */
    rate: num('BENCH_RATE', 500),
    rateS: num('BENCH_RATE_S', 120),
    /** Phase 1 first runs this long at its rate, not counted (the issues' "after warm-up": JIT, caches, pools). */
    rateWarmupS: num('BENCH_RATE_WARMUP_S', 30),
    rateSimDurationMs: num('BENCH_RATE_SIM_DURATION_MS', 3000),
    gangShare: num('BENCH_GANG_SHARE', 0.05),
    gangSize: num('BENCH_GANG_SIZE', 2),
    /** Phase 2: jobs queued while the scheduler is stopped, then drained. */
    backlog: num('BENCH_BACKLOG', 20000),
    backlogConnections: num('BENCH_BACKLOG_CONNECTIONS', 64),
    /** Long enough that no backlog job ends (and frees capacity) during the drain. */
    backlogSimDurationMs: num('BENCH_BACKLOG_SIM_DURATION_MS', 3_600_000),
    /** The preemption phase: submissions/s, for how long, the high-band share, how long high-band jobs run. */
    preemptRate: num('BENCH_PREEMPT_RATE', 100),
    preemptS: num('BENCH_PREEMPT_S', 60),
    preemptHighShare: num('BENCH_PREEMPT_HIGH_SHARE', 0.05),
    preemptHighRunMs: num('BENCH_PREEMPT_HIGH_RUN_MS', 30_000),
    /** The scheduler's GANTRY_PREEMPTION_GRACE_MS in this bench, and how long a victim takes to stop (SIM_STOP_MS). */
    preemptGraceMs: num('BENCH_PREEMPTION_GRACE_MS', 30_000),
    preemptStopMs: num('BENCH_PREEMPT_STOP_MS', 1000),
    preemptSettleS: num('BENCH_PREEMPT_SETTLE_S', 120),
    idleS: num('BENCH_IDLE_S', 10),
    registerTimeoutS: num('BENCH_REGISTER_TIMEOUT_S', 600),
    drainTimeoutS: num('BENCH_DRAIN_TIMEOUT_S', 600),
    /** Phase 1's drain alone; what it leaves QUEUED is placed first in phase 2 (FIFO) and counted there. */
    rateDrainTimeoutS: num('BENCH_RATE_DRAIN_TIMEOUT_S', num('BENCH_DRAIN_TIMEOUT_S', 600)),
    basePort: num('BENCH_BASE_PORT', 18900),
    kafkaPort: num('BENCH_KAFKA_PORT', 39192),
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gantry_bench_dispatch',
    redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379/14',
    logLevel: process.env.BENCH_LOG_LEVEL || 'info',
    /** The bench token's request budget (GANTRY_RATE_LIMIT_RPS, burst twice it): above what the backlog phase's submissions reach. */
    rateLimitRps: num('BENCH_RATE_LIMIT_RPS', 5000),
  };
}

export type DispatchConfig = ReturnType<typeof load>;

export function loadConfig(): DispatchConfig {
  const c = load();
  if (c.basePort < 18900 || c.basePort + 4 > 18999) throw new Error('BENCH_BASE_PORT: the services take five ports in 18900..18999');
  if (c.gangShare > 1) throw new Error('BENCH_GANG_SHARE is a share, 0..1');
  for (const p of c.phases)
    if (!['gang', 'curve', 'rate', 'backlog', 'preemption'].includes(p))
      throw new Error(`BENCH_PHASES: unknown phase ${p} (gang, curve, rate, backlog, preemption)`);
  if (!(c.preemptHighShare > 0 && c.preemptHighShare <= 1)) throw new Error('BENCH_PREEMPT_HIGH_SHARE is a share, above 0 and at most 1');
  if (c.curveRates.some((r) => !(r > 0))) throw new Error('BENCH_CURVE_RATES: positive numbers, comma-separated');
  return c;
}

/** Every GANTRY_* variable the services inherit from the bench's environment (they override defaults). */
export function inheritedGantryEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => k.startsWith('GANTRY_') && v !== undefined) as [string, string][]);
}
