/**
 * `npm run bench:arrays`: what one 10,000-child array create (ADR 0025) costs the other clients.
 * Brings up its own stack (Kafka on BENCH_KAFKA_PORT, database gantry_bench_arrays, Redis db 11 (a
 * default redis-server has 16), the
 * services on BENCH_BASE_PORT, BENCH_SIM_NODES sleep-executor nodes), then:
 *   1. a background client creates single jobs open-loop at BENCH_RATE/s (latency measured from each
 *      request's scheduled send, so queueing behind the array is counted) for the whole run;
 *   2. after BENCH_WARMUP_S (not counted) and a baseline window of BENCH_WINDOW_S, it sends one
 *      array of BENCH_ARRAY_SIZE (10,000) and times it to its 201;
 *   3. then another window of BENCH_WINDOW_S.
 * The background creates are summarised per window: before, while the array create was in flight
 * (requests scheduled then), and after. Jobs and children ask for a GPU model no node has, so
 * nothing is placed: the figure is the create's, not the scheduler's draining of 10,000 jobs.
 * Writes .cache/bench/arrays-<timestamp>.json and prints a summary.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalKafkaBroker, Stack, numberFromEnv as env } from '@gantry/stack';
import { conditions, freshBenchState } from '../api/infra';

const config = {
  arraySize: env('BENCH_ARRAY_SIZE', 10_000),
  rate: env('BENCH_RATE', 50),
  warmupS: env('BENCH_WARMUP_S', 5),
  windowS: env('BENCH_WINDOW_S', 10),
  simNodes: env('BENCH_SIM_NODES', 20),
  basePort: env('BENCH_BASE_PORT', 18340),
  kafkaPort: env('BENCH_KAFKA_PORT', 39392),
  databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gantry_bench_arrays',
  redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379/11',
};

const root = join(__dirname, '..', '..', '..');
const say = (m: string) => console.error(`[bench:arrays] ${m}`);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sample {
  scheduledAt: number;
  latencyMs: number;
  status: number;
}

function summary(samples: Sample[]) {
  const ms = samples.map((s) => s.latencyMs).sort((a, b) => a - b);
  const q = (p: number) => (ms.length ? Math.round(ms[Math.min(ms.length - 1, Math.floor(p * ms.length))] * 10) / 10 : null);
  const statuses: Record<string, number> = {};
  for (const s of samples) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
  return { count: ms.length, statuses, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: ms.length ? Math.round(ms[ms.length - 1]) : null };
}

async function main(): Promise<void> {
  const kafka = new LocalKafkaBroker(root, config.kafkaPort);
  const startedKafka = await kafka.startIfAbsent();
  let stack: Stack | null = null;
  try {
    await freshBenchState(root, kafka, config.databaseUrl, config.redisUrl);
    const token = `bench-admin-${randomBytes(24).toString('base64url')}`;
    stack = new Stack({
      root,
      logDir: join(root, '.cache', 'bench', 'logs', `arrays-${stamp}`),
      basePort: config.basePort,
      env: {
        GANTRY_ADMIN_TOKEN: token,
        KAFKA_BROKERS: kafka.brokers,
        DATABASE_URL: config.databaseUrl,
        REDIS_URL: config.redisUrl,
        LOG_LEVEL: 'warn',
        KAFKAJS_NO_PARTITIONER_WARNING: '1',
      },
      serviceEnv: {
        'node-agent': {
          GANTRY_SIM_NODES: String(config.simNodes),
          GANTRY_SIM_EXECUTOR: 'sleep',
          GANTRY_SIM_PREFIX: 'bench',
          GANTRY_AGENT_ID: 'bench-arrays',
          GANTRY_AGENT_WORKDIR: mkdtempSync(join(tmpdir(), 'gantry-bench-agent-')),
        },
      },
      readyTimeoutMs: 120_000,
      kafkaCredentials: kafka.credentials(),
    });
    await stack.start();
    const url = stack.gatewayUrl;
    const body = (extra: object = {}) =>
      JSON.stringify({
        name: 'bench',
        image: 'none',
        command: ['sleep'],
        env: { SIM_DURATION_MS: '1000' },
        resources: { gpus: 1, gpuModel: 'NO-SUCH-GPU', cpuCores: 1, memoryMiB: 64 },
        ...extra,
      });
    const post = (b: string) =>
      fetch(`${url}/v1/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: b,
      });

    // 1. The background client: open-loop, one create every 1000/rate ms whatever is outstanding.
    const samples: Sample[] = [];
    const inFlight: Promise<void>[] = [];
    let running = true;
    const start = performance.now();
    const background = (async () => {
      for (let i = 0; running; i++) {
        const scheduledAt = start + (i * 1000) / config.rate;
        const wait = scheduledAt - performance.now();
        if (wait > 0) await sleep(wait);
        inFlight.push(
          post(body()).then(
            async (r) => {
              await r.arrayBuffer();
              samples.push({ scheduledAt, latencyMs: performance.now() - scheduledAt, status: r.status });
            },
            () => {
              samples.push({ scheduledAt, latencyMs: performance.now() - scheduledAt, status: 0 });
            },
          ),
        );
      }
    })();

    say(`warm-up ${config.warmupS} s, baseline ${config.windowS} s at ${config.rate} creates/s`);
    await sleep((config.warmupS + config.windowS) * 1000);
    // 2. The array.
    say(`one array of ${config.arraySize}`);
    const arrayStart = performance.now();
    const res = await post(body({ array: { size: config.arraySize, parallelism: 10 } }));
    const arrayEnd = performance.now();
    const created = (await res.json()) as { id?: string; array?: unknown };
    if (res.status !== 201) throw new Error(`array create answered ${res.status}: ${JSON.stringify(created)}`);
    const arrayMs = Math.round(arrayEnd - arrayStart);
    say(`array created in ${arrayMs} ms`);
    // 3. After.
    await sleep(config.windowS * 1000);
    running = false;
    await background;
    await Promise.all(inFlight);

    const warmEnd = start + config.warmupS * 1000;
    const result = {
      bench: 'arrays',
      at: new Date().toISOString(),
      config,
      conditions: await conditions(root, config.databaseUrl, config.kafkaPort),
      arrayCreateMs: arrayMs,
      children: (created.array as { children?: unknown } | undefined)?.children,
      background: {
        before: summary(samples.filter((s) => s.scheduledAt >= warmEnd && s.scheduledAt < arrayStart)),
        during: summary(samples.filter((s) => s.scheduledAt >= arrayStart && s.scheduledAt < arrayEnd)),
        after: summary(samples.filter((s) => s.scheduledAt >= arrayEnd)),
      },
    };
    mkdirSync(join(root, '.cache', 'bench'), { recursive: true });
    const file = join(root, '.cache', 'bench', `arrays-${stamp}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2));
    console.log(
      JSON.stringify(
        {
          arrayCreateMs: result.arrayCreateMs,
          background: result.background,
          loadAvgAtStart: (result.conditions as { loadAvgAtStart?: unknown }).loadAvgAtStart,
        },
        null,
        2,
      ),
    );
    say(`wrote ${file}`);
  } finally {
    await stack?.stop();
    if (startedKafka) await kafka.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
