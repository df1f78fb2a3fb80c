/**
 * bench:heartbeats: drives a simulated fleet through the whole local stack and reports sustained
 * ingestion, sentAt -> Redis lag, the ingester's CPU per beat, the summary endpoint's latency, and a
 * same-run `redis-benchmark -P 16` rate as the denominator of a machine-independent ratio.
 *
 * Starts its own broker on 49092 unless one runs there (scripts/kafka/start.sh: authenticated, with
 * ACLs; every beat is signed by its node and verified by the ingester and the reconciler, ADR 0015),
 * and needs Postgres and Redis. Creates its database, migrates it and creates the topics itself.
 *
 * Steps: 1. prepare database and topics; 2. redis-benchmark baseline on a quiet machine;
 * 3. start the services and the fleet; 4. warm up; 5. sample metrics, /proc and the summary
 * endpoint for the measured window; 6. the capacity phase (drain-phase.ts: the readers work through
 * a backlog the agent sent while they were stopped, without the simulator on the CPU; skipped with
 * BENCH_DRAIN_FILL_S=0); 7. stop everything and print (and keep) the results.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { createKafka } from '@gantry/messaging';
import { LocalKafkaBroker, Stack, kafkaSecurityFor, numberFromEnv } from '@gantry/stack';
import { cpuProfilerEnv } from '../api/cpu-profiler-env';
import { jitCpuSeconds } from '../api/infra';
import { HEARTBEAT_GROUPS, drainPhase } from './drain-phase';
import { buckets, histogramQuantile, parsePrometheus, sum, sumByLabel } from './prometheus-text';

const env = (k: string, d: string) => process.env[k] || d;
const cfg = {
  nodes: numberFromEnv('BENCH_NODES', 50000),
  heartbeatMs: numberFromEnv('BENCH_HEARTBEAT_MS', 5000),
  durationS: numberFromEnv('BENCH_DURATION_S', 300),
  warmupS: numberFromEnv('BENCH_WARMUP_S', 30),
  basePort: numberFromEnv('BENCH_BASE_PORT', 18500),
  kafkaPort: numberFromEnv('BENCH_KAFKA_PORT', 49092),
  databaseUrl: env('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/gantry_bench_hb'),
  redisUrl: env('REDIS_URL', 'redis://127.0.0.1:6379/6'),
  /** Empty the Redis db first (only for a db of the benchmark's own). */
  flushRedis: env('BENCH_FLUSH_REDIS', '0') === '1',
  ingestConcurrency: env('GANTRY_INGEST_CONCURRENCY', '4'),
  /** Beats per full telemetry (ADR 0010); 1 sends telemetry in every beat. */
  telemetryEvery: env('BENCH_TELEMETRY_EVERY', '6'),
  /** Seconds the agent sends with the readers stopped before the capacity phase (drain-phase.ts); 0 skips it. */
  drainFillS: numberFromEnv('BENCH_DRAIN_FILL_S', 30),
  /** When set, every service writes a V8 CPU profile to <dir>/<service>/<pid>.cpuprofile when it stops (bench/api/cpu-profiler). */
  profileDir: process.env.BENCH_PROFILE_DIR ?? '',
};
const root = join(__dirname, '..', '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CLK_TCK = 100;

function cpuSeconds(pid: number): number {
  // Fields 14 and 15 of /proc/<pid>/stat (after the parenthesised name): utime, stime in ticks.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Busy and total jiffies of the whole machine (first line of /proc/stat). */
function machineJiffies(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - f[4], total }; // idle and iowait
}

/** The pids of the processes that share the machine with the services: the broker, Redis, Postgres. */
function infraPids(kafka: string): Record<string, number[]> {
  const sh = (cmd: string) => {
    try {
      return execFileSync('sh', ['-c', cmd], { encoding: 'utf8' });
    } catch {
      return '';
    }
  };
  const port = kafka.split(',')[0].split(':').pop();
  return {
    kafka: [...sh(`ss -Hltnp 'sport = :${port}'`).matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])),
    redis: sh('pgrep -x redis-server').split(/\s+/).filter(Boolean).map(Number),
    postgres: sh('pgrep -u postgres').split(/\s+/).filter(Boolean).map(Number),
  };
}

/** CPU seconds per pid; a pid gone by the second sample is left out of both (Postgres backends come and go). */
function cpuOfPids(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const p of pids) {
    try {
      out.set(p, cpuSeconds(p));
    } catch {
      // exited
    }
  }
  return out;
}
const deltaCores = (a: Map<number, number>, b: Map<number, number>, seconds: number) =>
  [...b].reduce((sum, [pid, v]) => sum + (a.has(pid) ? v - a.get(pid)! : 0), 0) / seconds;

/** Redis's own accounting per command: calls and microseconds (INFO commandstats). */
async function commandStats(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm))
    out.set(m[1], { calls: Number(m[2]), usec: Number(m[3]) });
  return out;
}

async function scrape(url: string) {
  return parsePrometheus(await (await fetch(`${url}/metrics`)).text());
}

function quantile(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
}

function redisBenchmark(redisUrl: string): { set: number; get: number; raw: string } {
  const u = new URL(redisUrl);
  const raw = execFileSync('redis-benchmark', ['-h', u.hostname, '-p', u.port || '6379', '-P', '16', '-q', '-t', 'set,get', '-n', '200000'], {
    encoding: 'utf8',
  });
  const rate = (cmd: string) => Number(new RegExp(`${cmd}: ([\\d.]+) requests per second`).exec(raw.replace(/\r/g, '\n'))?.[1] ?? NaN);
  return {
    set: rate('SET'),
    get: rate('GET'),
    raw: raw
      .trim()
      .split(/\r|\n/)
      .filter((l) => l.includes('requests per second'))
      .join('; '),
  };
}

/**
 * Deletes the consumer groups that read the heartbeat topic, so that this run's ingester and
 * reconciler start at its head (a new group reads from the end). A broker left up keeps the groups'
 * offsets: a saturated earlier run left up to two million beats unread, signed with that run's
 * secret, and the next run's ingester spent its whole window refusing them (bad-signature).
 */
async function forgetHeartbeatReaders(brokers: string, broker: LocalKafkaBroker): Promise<void> {
  const kafka = createKafka({ brokers: brokers.split(','), clientId: 'bench-heartbeats', security: kafkaSecurityFor(broker.credentials()) });
  await kafka.withAdmin(async (admin) => {
    const wanted: string[] = Object.values(HEARTBEAT_GROUPS);
    const { groups } = await admin.listGroups();
    const present = groups.map((g) => g.groupId).filter((g) => wanted.includes(g));
    if (present.length > 0) await admin.deleteGroups(present);
  });
}

const profiling = (service: string) => cpuProfilerEnv(cfg.profileDir, service);

async function main(): Promise<void> {
  const broker = new LocalKafkaBroker(root, cfg.kafkaPort);
  const brokerStarted = await broker.startIfAbsent();
  const kafka = broker.brokers;
  const runEnv = { ...process.env, KAFKA_BROKERS: kafka, DATABASE_URL: cfg.databaseUrl };
  // 1. Database, migrations, topics and ACLs (idempotent).
  execFileSync(process.execPath, [join(root, 'dist/tools/infra/ensure-databases.js'), cfg.databaseUrl], { stdio: 'inherit', env: runEnv });
  execFileSync(process.execPath, [join(root, 'dist/libs/persistence/src/cli/migrate.js')], { stdio: 'inherit', env: runEnv });
  await broker.createTopics();
  await forgetHeartbeatReaders(kafka, broker);
  const redis = new Redis(cfg.redisUrl);
  if (cfg.flushRedis) await redis.flushdb();

  // 2. Baseline before the stack starts, so it measures this machine's Redis, not the contention.
  const baseline = redisBenchmark(cfg.redisUrl);
  console.log(`redis-benchmark -P 16: SET ${baseline.set}/s, GET ${baseline.get}/s`);

  // 3. The whole stack as processes.
  const tag = `bench-${Date.now().toString(36)}`;
  const adminToken = `bench-admin-${tag}-${randomBytes(16).toString('base64url')}`;
  const stack = new Stack({
    root,
    logDir: join(root, '.cache', 'bench-logs', tag),
    basePort: cfg.basePort,
    readyTimeoutMs: 180_000,
    env: {
      GANTRY_ADMIN_TOKEN: adminToken,
      KAFKA_BROKERS: kafka,
      DATABASE_URL: cfg.databaseUrl,
      REDIS_URL: cfg.redisUrl,
      GANTRY_HEARTBEAT_MS: String(cfg.heartbeatMs),
      GANTRY_INGEST_CONCURRENCY: cfg.ingestConcurrency,
      GANTRY_TELEMETRY_EVERY: cfg.telemetryEvery,
      LOG_LEVEL: 'warn',
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
    },
    serviceEnv: {
      'api-gateway': profiling('api-gateway'),
      scheduler: profiling('scheduler'),
      'heartbeat-ingester': profiling('heartbeat-ingester'),
      reconciler: profiling('reconciler'),
      'node-agent': {
        GANTRY_SIM_NODES: String(cfg.nodes),
        GANTRY_SIM_EXECUTOR: 'sleep',
        GANTRY_SIM_PREFIX: 'bench',
        GANTRY_AGENT_ID: tag,
        ...profiling('node-agent'),
      },
    },
    kafkaCredentials: broker.credentials(),
  });
  const t0 = Date.now();
  await stack.start();
  console.log(
    `stack ready in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${cfg.nodes} nodes at ${cfg.heartbeatMs} ms = ${Math.round((cfg.nodes * 1000) / cfg.heartbeatMs)} beats/s offered`,
  );
  const ingester = stack.get('heartbeat-ingester');
  const agent = stack.get('node-agent');
  const reconciler = stack.get('reconciler');
  try {
    // 4. Warm-up.
    await sleep(cfg.warmupS * 1000);

    // 5. Measure.
    const m0 = await scrape(ingester.url);
    const a0 = await scrape(agent.url);
    const infra = infraPids(kafka);
    const sampleCpu = () => ({
      ingester: cpuSeconds(ingester.pid!),
      agent: cpuSeconds(agent.pid!),
      reconciler: cpuSeconds(reconciler.pid!),
      gateway: cpuSeconds(stack.get('api-gateway').pid!),
      scheduler: cpuSeconds(stack.get('scheduler').pid!),
    });
    const infraCpu = () => ({ kafka: cpuOfPids(infra.kafka), redis: cpuOfPids(infra.redis), postgres: cpuOfPids(infra.postgres) });
    // The broker's JIT compiler threads, apart: a broker started for the run compiles through its first minute.
    const kafkaJit = () => infra.kafka.reduce((s, p) => s + jitCpuSeconds(p), 0);
    const infra0 = infraCpu();
    const jit0 = kafkaJit();
    const cpu0 = sampleCpu();
    const redis0 = await commandStats(redis);
    const machine0 = machineJiffies();
    const start = Date.now();
    const end = start + cfg.durationS * 1000;
    const summaryMs: number[] = [];
    const probeLagMs: number[] = [];
    let maxConsumerLag = 0;
    let summary: unknown = null;
    const token = adminToken;
    let lastLagScrape = 0;
    while (Date.now() < end) {
      const s0 = performance.now();
      const res = await fetch(`${stack.gatewayUrl}/v1/cluster/summary`, { headers: { authorization: `Bearer ${token}` } });
      summary = await res.json();
      summaryMs.push(performance.now() - s0);
      // Probe: a few random nodes' receivedAt - sentAt as stored (sentAt -> the ingester's write).
      const pipeline = redis.pipeline();
      for (let i = 0; i < 10; i++)
        pipeline.hmget(`gantry:node:bench-${String(Math.floor(Math.random() * cfg.nodes)).padStart(5, '0')}`, 'sentAt', 'receivedAt');
      for (const [, v] of (await pipeline.exec()) ?? []) {
        const [sent, received] = v as [string | null, string | null];
        if (sent && received) probeLagMs.push(Number(received) - Number(sent));
      }
      if (Date.now() - lastLagScrape > 2000) {
        lastLagScrape = Date.now();
        const lag = (await scrape(ingester.url))
          .filter((x) => x.name === 'gantry_consumer_lag' && x.labels.group === 'gantry-heartbeat-ingester')
          .reduce((a, x) => a + x.value, 0);
        maxConsumerLag = Math.max(maxConsumerLag, lag);
      }
      await sleep(100);
    }
    const seconds = (Date.now() - start) / 1000;
    const m1 = await scrape(ingester.url);
    const a1 = await scrape(agent.url);
    const cpu1 = sampleCpu();
    const infra1 = infraCpu();
    const jit1 = kafkaJit();
    const redis1 = await commandStats(redis);
    const machine1 = machineJiffies();

    const ingested = sum(m1, 'gantry_heartbeats_ingested_total') - sum(m0, 'gantry_heartbeats_ingested_total');
    const withTelemetry = sum(m1, 'gantry_heartbeats_with_telemetry_total') - sum(m0, 'gantry_heartbeats_with_telemetry_total');
    const r2 = (v: number) => Math.round(v * 100) / 100;
    const cores = (k: keyof typeof cpu0) => Math.round(((cpu1[k] - cpu0[k]) / seconds) * 100) / 100;
    // Refused (a signature or the clock) or judged not newer (a replay, a redelivery, a lost race).
    const stale = ['gantry_messages_rejected_total', 'gantry_heartbeats_repeated_total', 'gantry_heartbeats_raced_total'].reduce(
      (n, k) => n + sum(m1, k) - sum(m0, k),
      0,
    );
    const sent = sum(a1, 'gantry_agent_heartbeats_sent_total') - sum(a0, 'gantry_agent_heartbeats_sent_total');
    const lagB0 = buckets(m0, 'gantry_heartbeat_ingest_lag_seconds');
    const lagB1 = buckets(m1, 'gantry_heartbeat_ingest_lag_seconds');
    const bs = (n: string) => sum(m1, n) - sum(m0, n);
    const rejectedBefore = sumByLabel(m0, 'gantry_messages_rejected_total', 'reason');
    summaryMs.sort((a, b) => a - b);
    probeLagMs.sort((a, b) => a - b);
    const beatsPerS = ingested / seconds;
    const result = {
      conditions: {
        ...cfg,
        offeredPerS: Math.round((cfg.nodes * 1000) / cfg.heartbeatMs),
        measuredS: Math.round(seconds),
        commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim(),
        cpu: `${cpus().length} x ${cpus()[0]?.model}`,
        memGiB: Math.round(totalmem() / 2 ** 30),
        node: process.version,
        loadavgAtEnd: loadavg().map((x) => x.toFixed(2)),
      },
      sentPerS: Math.round(sent / seconds),
      ingestedPerS: Math.round(beatsPerS),
      /** Beats that reached the writer (admitted), written or not: the newest of a node per batch is written. */
      consumedPerS: Math.round(bs('gantry_heartbeat_batch_size_sum') / seconds),
      stalePerS: Math.round(stale / seconds),
      /** Refused beats per second by reason (gantry_messages_rejected_total): none is expected from the simulator. */
      rejectedPerS: Object.fromEntries(
        [...sumByLabel(m1, 'gantry_messages_rejected_total', 'reason')].map(([reason, n]) => [
          reason,
          Math.round((n - (rejectedBefore.get(reason) ?? 0)) / seconds),
        ]),
      ),
      lagHistogramS: {
        p50: histogramQuantile(lagB0, lagB1, 0.5),
        p99: histogramQuantile(lagB0, lagB1, 0.99),
        p999: histogramQuantile(lagB0, lagB1, 0.999),
      },
      lagProbeMs: { samples: probeLagMs.length, p50: quantile(probeLagMs, 0.5), p99: quantile(probeLagMs, 0.99), max: probeLagMs[probeLagMs.length - 1] },
      meanBatchSize: bs('gantry_heartbeat_batch_size_count') ? bs('gantry_heartbeat_batch_size_sum') / bs('gantry_heartbeat_batch_size_count') : null,
      maxConsumerLagMessages: maxConsumerLag,
      ingesterCpuPerBeatUs: ingested ? ((cpu1.ingester - cpu0.ingester) / ingested) * 1e6 : null,
      ingesterCpuCores: (cpu1.ingester - cpu0.ingester) / seconds,
      agentCpuCores: (cpu1.agent - cpu0.agent) / seconds,
      // The reconciler reads every beat too (level-based repair, ADR 0005): it shares the cores.
      reconcilerCpuCores: (cpu1.reconciler - cpu0.reconciler) / seconds,
      // Time inside Redis per command (a script's time includes the commands it runs), top 6.
      redisCommands: [...redis1]
        .map(([cmd, v]) => ({
          cmd,
          callsPerS: Math.round((v.calls - (redis0.get(cmd)?.calls ?? 0)) / seconds),
          cores: Math.round(((v.usec - (redis0.get(cmd)?.usec ?? 0)) / 1e6 / seconds) * 1000) / 1000,
        }))
        .sort((a, b) => b.cores - a.cores)
        .slice(0, 6),
      telemetryShare: ingested ? withTelemetry / ingested : null,
      cpuCores: {
        machine: Math.round(((machine1.busy - machine0.busy) / (machine1.total - machine0.total)) * cpus().length * 100) / 100,
        agent: cores('agent'),
        ingester: cores('ingester'),
        reconciler: cores('reconciler'),
        kafka: r2(deltaCores(infra0.kafka, infra1.kafka, seconds)),
        kafkaJit: r2((jit1 - jit0) / seconds),
        redis: r2(deltaCores(infra0.redis, infra1.redis, seconds)),
        postgres: r2(deltaCores(infra0.postgres, infra1.postgres, seconds)),
        gateway: cores('gateway'),
        scheduler: cores('scheduler'),
      },
      summaryLatencyMs: { samples: summaryMs.length, p50: quantile(summaryMs, 0.5), p99: quantile(summaryMs, 0.99), max: summaryMs[summaryMs.length - 1] },
      redisBenchmark: baseline,
      beatsPerRedisSet: beatsPerS / baseline.set,
      lastSummary: summary,
    };
    if (cfg.drainFillS > 0) {
      console.log(`capacity: readers stopped, the agent sends for ${cfg.drainFillS} s, then the readers work through it alone`);
      const total = (m: Map<number, number>) => [...m.values()].reduce((a, b) => a + b, 0);
      Object.assign(result, {
        capacity: await drainPhase({
          fillS: cfg.drainFillS,
          timeoutS: 300,
          ingester,
          reconciler,
          agent,
          cpu: () => ({
            ingester: cpuSeconds(ingester.pid!),
            reconciler: cpuSeconds(reconciler.pid!),
            kafka: total(cpuOfPids(infra.kafka)),
            redis: total(cpuOfPids(infra.redis)),
          }),
        }),
      });
    }
    console.log(JSON.stringify(result, null, 2));
    mkdirSync(join(root, '.cache', 'bench'), { recursive: true });
    const file = join(root, '.cache', 'bench', `heartbeats-${tag}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2));
    console.log(`raw results: ${file}`);
  } finally {
    redis.disconnect();
    await stack.stop();
    if (brokerStarted) await broker.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
