/**
 * bench:detection: how long the control plane takes to declare a dead node UNHEALTHY with the
 * default timeouts (heartbeat 5 s, suspect 15 s, dead 40 s, detector every 2 s), and that a node
 * that never died is never declared so.
 *
 * Needs Kafka, Postgres and Redis as `npm test` sets them up (defaults: broker 127.0.0.1:29092, the
 * gantry_test database, already migrated, Redis db 10, emptied first); override with KAFKA_BROKERS,
 * DATABASE_URL, REDIS_URL.
 *
 * Steps: 1. start the services with default timeouts, a steady fleet (BENCH_STEADY nodes) and
 * BENCH_VICTIM_AGENTS victim agents of 3 nodes each (below the partition rack minimum of 4, so each
 * death is judged on its own); 2. SIGKILL the victims one by one, BENCH_STAGGER_MS apart;
 * 3. for each victim node, detection time = the detector's UNHEALTHY event time minus the time its
 * last beat was written (both the control plane's clock); 4. watch the steady fleet for the whole
 * run: any DEGRADED or UNHEALTHY event on it is a false positive; 5. print p50/p99/max as JSON.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { existsSync } from 'node:fs';
import { ServiceProcess, Stack, kafkaCredentialsFromEnv, numberFromEnv, readKafkaCredentials, waitFor } from '@gantry/stack';

const env = (k: string, d: string) => process.env[k] || d;
const cfg = {
  steady: numberFromEnv('BENCH_STEADY', 200),
  victimAgents: numberFromEnv('BENCH_VICTIM_AGENTS', 7),
  staggerMs: numberFromEnv('BENCH_STAGGER_MS', 700),
  basePort: numberFromEnv('BENCH_BASE_PORT', 18740),
  kafka: env('KAFKA_BROKERS', '127.0.0.1:29092'),
  databaseUrl: env('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/gantry_test'),
  redisUrl: env('REDIS_URL', 'redis://127.0.0.1:6379/10'),
};
const NODES_PER_VICTIM = 3;
const TEST_BROKER_CREDENTIALS = join(__dirname, '..', '..', '..', '.cache', 'kafka', 'data-29092', 'credentials.json');
const DEAD_MS = 40_000;
const root = join(__dirname, '..', '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

async function main(): Promise<void> {
  const tag = `det-${Date.now().toString(36)}`;
  const logDir = join(root, '.cache', 'bench-logs', tag);
  const redis = new Redis(cfg.redisUrl);
  await redis.flushdb();
  const ds = new DataSource({ type: 'postgres', url: cfg.databaseUrl });
  await ds.initialize();
  // Defaults for every timeout: only infrastructure and identities are set.
  const common = { KAFKA_BROKERS: cfg.kafka, DATABASE_URL: cfg.databaseUrl, REDIS_URL: cfg.redisUrl, LOG_LEVEL: 'info' };
  const stack = new Stack({
    root,
    logDir,
    basePort: cfg.basePort,
    env: { ...common, GANTRY_ADMIN_TOKEN: `bench-admin-${tag}-${randomBytes(16).toString('base64url')}` },
    serviceEnv: {
      'node-agent': { GANTRY_SIM_NODES: String(cfg.steady), GANTRY_SIM_PREFIX: `${tag}-s`, GANTRY_AGENT_ID: `${tag}-s`, GANTRY_SIM_EXECUTOR: 'sleep' },
    },
    // The broker's users: from npm test's environment, or the test broker's own file.
    kafkaCredentials: kafkaCredentialsFromEnv() ?? (existsSync(TEST_BROKER_CREDENTIALS) ? readKafkaCredentials(TEST_BROKER_CREDENTIALS) : null),
  });
  const victims = Array.from(
    { length: cfg.victimAgents },
    (_, i) =>
      new ServiceProcess({
        name: `victim-${i}`,
        service: 'node-agent',
        port: cfg.basePort + 6 + i,
        root,
        logDir,
        env: stack.envFor('node-agent', {
          GANTRY_SIM_NODES: String(NODES_PER_VICTIM),
          GANTRY_SIM_PREFIX: `${tag}-v${i}`,
          GANTRY_AGENT_ID: `${tag}-v${i}`,
          GANTRY_SIM_EXECUTOR: 'sleep',
          GANTRY_AGENT_WORKDIR: mkdtempSync(join(tmpdir(), 'gantry-bench-')),
        }),
      }),
  );
  const startedAt = new Date();
  try {
    // 1. Start everything.
    await stack.start();
    for (const v of victims) v.start();
    for (const v of victims) await v.ready(60_000);
    // Let the detector's leader pass its grace period and see every node beat for a while.
    await sleep(20_000);

    // 2. Kill the victims one by one; note each node's last written beat.
    const lastBeat = new Map<string, number>();
    for (const [i, v] of victims.entries()) {
      v.kill('SIGKILL');
      await sleep(cfg.staggerMs);
      for (let n = 0; n < NODES_PER_VICTIM; n++) {
        const id = `${tag}-v${i}-${String(n).padStart(5, '0')}`;
        lastBeat.set(id, Number(await redis.zscore('gantry:nodes:last-seen', id)));
      }
    }

    // 3. Wait for every victim node's UNHEALTHY event.
    const ids = [...lastBeat.keys()];
    const declared = await waitFor(
      'every victim declared UNHEALTHY',
      async () => {
        const rows: Array<{ node_id: string; at: Date }> = await ds.query(
          `SELECT node_id, min(at) AS at FROM node_events WHERE node_id = ANY($1::text[]) AND to_health = 'UNHEALTHY' GROUP BY node_id`,
          [ids],
        );
        return rows.length === ids.length ? rows : undefined;
      },
      { timeoutMs: DEAD_MS * 2, intervalMs: 500 },
    );
    // Keep watching the steady fleet a little longer than a dead timeout after the last death.
    await sleep(5_000);

    // 4. False positives on the steady fleet over the whole run.
    const [falsePositives] = await ds.query(
      `SELECT count(*)::int AS n FROM node_events WHERE node_id LIKE $1 AND at >= $2 AND type = 'HEALTH_CHANGED' AND to_health <> 'HEALTHY'`,
      [`${tag}-s-%`, startedAt],
    );
    const times = declared.map((r) => new Date(r.at).getTime() - lastBeat.get(r.node_id)!).sort((a, b) => a - b);
    // 5. Report.
    const result = {
      at: new Date().toISOString(),
      settings: { heartbeatMs: 5000, suspectMs: 15000, deadMs: DEAD_MS, detectorIntervalMs: 2000, steadyNodes: cfg.steady, victims: ids.length },
      detectionMs: { p50: quantile(times, 0.5), p99: quantile(times, 0.99), min: times[0], max: times[times.length - 1] },
      steadyNodesDeclaredDegradedOrWorse: falsePositives.n,
      runSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    };
    console.log(JSON.stringify(result, null, 2));
    if (result.detectionMs.p99 >= 45_000 || falsePositives.n > 0) process.exitCode = 1;
  } finally {
    for (const v of victims) await v.stop(2_000);
    await stack.stop();
    redis.disconnect();
    await ds.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
