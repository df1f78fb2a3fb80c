/**
 * `npm run bench:streams`: what one gateway pays for live event streams (contract §4.5, ADR 0028).
 * Brings up its own stack (as bench:api does: Kafka on BENCH_KAFKA_PORT, database gantry_bench_streams,
 * Redis db 6, the services on BENCH_BASE_PORT, a fleet of BENCH_SIM_NODES sleep-executor nodes),
 * then measures, with BENCH_FOLLOWERS (1,000) SSE followers held open by this process:
 *   1. baseline: the stack idle, no streams (gateway CPU and RSS);
 *   2. idle streams: the followers on jobs that never move (GPU model that no node has), no load;
 *      the gateway's CPU over that window, minus the baseline, divided by the streams, is what an
 *      idle stream costs per second; the bytes they received are the keep-alives;
 *   3. load: jobs created open-loop at BENCH_RATE/s (500) for BENCH_LOAD_S, each followed by one of
 *      the followers from creation to its end (then the follower takes the next job): gateway CPU,
 *      RSS, events delivered per second, and the delay from an event's time to its arrival.
 * Writes everything to .cache/bench/streams-<timestamp>.json and prints a summary.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSse } from '@gantry/client';
import { LocalKafkaBroker, Stack, numberFromEnv as env, withDb } from '@gantry/stack';
import { freshBenchState, conditions, cpuBetween, cpuSnapshot } from '../api/infra';

const config = {
  followers: env('BENCH_FOLLOWERS', 1000),
  rate: env('BENCH_RATE', 500),
  loadS: env('BENCH_LOAD_S', 30),
  idleS: env('BENCH_IDLE_S', 20),
  warmupS: env('BENCH_WARMUP_S', 10),
  simNodes: env('BENCH_SIM_NODES', 200),
  basePort: env('BENCH_BASE_PORT', 18440),
  kafkaPort: env('BENCH_KAFKA_PORT', 39092),
  keepAliveMs: env('BENCH_SSE_KEEPALIVE_MS', 15_000),
  databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gantry_bench_streams',
  redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379/6',
};

const root = join(__dirname, '..', '..', '..');
const say = (m: string) => console.error(`[bench:streams] ${m}`);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

interface Counters {
  events: number;
  bytes: number;
  delaysMs: number[];
  errors: number;
  streamsEnded: number;
}

/** One SSE follower: follows `next()`'s job to its end, then the next; `idle` jobs never end. */
async function follower(url: string, token: string, next: () => Promise<string | null>, c: Counters, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    const id = await next();
    if (id === null) return;
    try {
      const res = await fetch(`${url}/v1/jobs/${id}/events?follow=true`, {
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
        signal: stop,
      });
      if (!res.ok || !res.body) {
        c.errors++;
        await sleep(100);
        continue;
      }
      const [counted, parsed] = res.body.tee();
      void (async () => {
        for await (const chunk of counted as unknown as AsyncIterable<Uint8Array>) c.bytes += chunk.length;
      })().catch(() => undefined);
      for await (const m of readSse(parsed)) {
        c.events++;
        c.delaysMs.push(Date.now() - Date.parse(JSON.parse(m.data).at));
      }
      c.streamsEnded++;
    } catch {
      if (!stop.aborted) c.errors++;
    }
  }
}

function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function main(): Promise<void> {
  const kafka = new LocalKafkaBroker(root, config.kafkaPort);
  const startedKafka = await kafka.startIfAbsent();
  const agentWork = mkdtempSync(join(tmpdir(), 'gantry-bench-agent-'));
  let stack: Stack | null = null;
  const stop = new AbortController();
  try {
    await freshBenchState(root, kafka, config.databaseUrl, config.redisUrl);
    const token = `bench-admin-${randomBytes(24).toString('base64url')}`;
    stack = new Stack({
      root,
      logDir: join(root, '.cache', 'bench', 'logs', `streams-${stamp}`),
      basePort: config.basePort,
      env: {
        GANTRY_ADMIN_TOKEN: token,
        KAFKA_BROKERS: kafka.brokers,
        DATABASE_URL: config.databaseUrl,
        REDIS_URL: config.redisUrl,
        LOG_LEVEL: 'warn',
        KAFKAJS_NO_PARTITIONER_WARNING: '1',
        GANTRY_SSE_KEEPALIVE_MS: String(config.keepAliveMs),
        GANTRY_SSE_MAX_STREAMS: String(config.followers * 2),
        GANTRY_STREAMS_PER_TOKEN: String(config.followers * 2),
      },
      serviceEnv: {
        'node-agent': {
          GANTRY_SIM_NODES: String(config.simNodes),
          GANTRY_SIM_EXECUTOR: 'sleep',
          GANTRY_SIM_PREFIX: 'bench',
          GANTRY_AGENT_ID: 'bench-streams',
          GANTRY_AGENT_WORKDIR: agentWork,
        },
      },
      readyTimeoutMs: 120_000,
      kafkaCredentials: kafka.credentials(),
    });
    await stack.start();
    const gw = stack.services[0].pid!;
    const url = stack.gatewayUrl;
    const create = async (body: object) => {
      const res = await fetch(`${url}/v1/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    };
    await withDb(config.databaseUrl, async (c) => {
      while (Number((await c.query(`SELECT count(*) AS n FROM nodes`)).rows[0].n) < config.simNodes) await sleep(500);
    });
    const job = (extra: object = {}) => ({
      name: 'bench',
      image: 'none',
      command: ['sleep'],
      env: { SIM_DURATION_MS: '1000' },
      resources: { gpus: 0, cpuCores: 1, memoryMiB: 64 },
      ...extra,
    });

    say(`warm-up ${config.warmupS} s at ${config.rate} jobs/s`);
    for (let t = Date.now(); Date.now() - t < config.warmupS * 1000;) {
      await Promise.all(Array.from({ length: config.rate / 10 }, () => create(job())));
      await sleep(100);
    }
    await sleep(3000);

    say(`baseline: ${config.idleS} s, no streams, no load`);
    let a = cpuSnapshot();
    const rssBase = rssMiB(gw);
    await sleep(config.idleS * 1000);
    let b = cpuSnapshot();
    const baseline = cpuBetween(a, b, { 'api-gateway': gw });

    say(`idle streams: ${config.followers} followers of jobs that never start, ${config.idleS} s`);
    const parked: string[] = [];
    for (let i = 0; i < config.followers; i++) parked.push(await create(job({ resources: { gpus: 1, gpuModel: 'NO-SUCH-GPU', cpuCores: 1, memoryMiB: 64 } })));
    const idleCounters: Counters = { events: 0, bytes: 0, delaysMs: [], errors: 0, streamsEnded: 0 };
    const idleStop = new AbortController();
    const idleFollowers = parked.map((id) => {
      let given = false;
      return follower(url, token, async () => (given ? null : ((given = true), id)), idleCounters, idleStop.signal);
    });
    await sleep(5000); // every stream open and caught up (one CREATED event each)
    const idleBytesBefore = idleCounters.bytes;
    a = cpuSnapshot();
    await sleep(config.idleS * 1000);
    b = cpuSnapshot();
    const idle = cpuBetween(a, b, { 'api-gateway': gw });
    const rssIdle = rssMiB(gw);
    const idleBytes = idleCounters.bytes - idleBytesBefore;
    idleStop.abort();
    await Promise.allSettled(idleFollowers);
    await sleep(2000);

    say(`load: ${config.rate} jobs/s for ${config.loadS} s, ${config.followers} followers taking each new job`);
    const queue: string[] = [];
    const waiting: Array<(id: string | null) => void> = [];
    let producing = true;
    const next = () =>
      new Promise<string | null>((resolve) => {
        const id = queue.shift();
        if (id) resolve(id);
        else if (!producing) resolve(null);
        else waiting.push(resolve);
      });
    const counters: Counters = { events: 0, bytes: 0, delaysMs: [], errors: 0, streamsEnded: 0 };
    const followers = Array.from({ length: config.followers }, () => follower(url, token, next, counters, stop.signal));
    let created = 0;
    let createErrors = 0;
    const start = Date.now();
    a = cpuSnapshot();
    let rssPeak = 0;
    // Open loop: every 10 ms, the creates that the schedule says are due, whatever is still outstanding.
    while (Date.now() - start < config.loadS * 1000) {
      const due = Math.floor(((Date.now() - start) / 1000) * config.rate) - created;
      for (let i = 0; i < due; i++) {
        created++;
        create(job()).then(
          (id) => {
            const w = waiting.shift();
            if (w) w(id);
            else queue.push(id);
          },
          () => createErrors++,
        );
      }
      rssPeak = Math.max(rssPeak, rssMiB(gw));
      await sleep(10);
    }
    b = cpuSnapshot();
    const load = cpuBetween(a, b, { 'api-gateway': gw });
    const eventsDuringLoad = counters.events;
    producing = false;
    for (const w of waiting.splice(0)) w(null);
    await Promise.race([Promise.allSettled(followers), sleep(20_000)]);
    stop.abort();

    const gwIdle = idle.components['api-gateway']?.cpuS ?? 0;
    const gwBase = baseline.components['api-gateway']?.cpuS ?? 0;
    const result = {
      config,
      conditions: await conditions(root, config.databaseUrl, config.kafkaPort),
      baseline: { cpu: baseline, gatewayRssMiB: rssBase },
      idleStreams: {
        cpu: idle,
        gatewayRssMiB: rssIdle,
        gatewayCpuPerSecond: gwIdle / idle.wallS,
        extraGatewayCpuMsPerStreamPerSecond: ((gwIdle - gwBase) / idle.wallS / config.followers) * 1000,
        rssPerStreamKiB: ((rssIdle - rssBase) * 1024) / config.followers,
        bytesPerStreamPerSecond: idleBytes / config.followers / config.idleS,
        errors: idleCounters.errors,
      },
      load: {
        cpu: load,
        created,
        createErrors,
        gatewayCpuShareOfOneCore: (load.components['api-gateway']?.cpuS ?? 0) / load.wallS,
        gatewayRssPeakMiB: rssPeak,
        eventsPerSecond: eventsDuringLoad / load.wallS,
        streamsCompleted: counters.streamsEnded,
        delayMs: { p50: percentile(counters.delaysMs, 50), p99: percentile(counters.delaysMs, 99), max: percentile(counters.delaysMs, 100) },
        followerErrors: counters.errors,
      },
    };
    mkdirSync(join(root, '.cache', 'bench'), { recursive: true });
    const out = join(root, '.cache', 'bench', `streams-${stamp}.json`);
    writeFileSync(out, JSON.stringify(result, null, 2));
    console.log(JSON.stringify({ baseline: result.baseline.gatewayRssMiB, idle: result.idleStreams, load: { ...result.load, cpu: undefined } }, null, 2));
    say(`written to ${out}`);
  } finally {
    stop.abort();
    await stack?.stop().catch(() => undefined);
    if (startedKafka) await kafka.stop().catch(() => undefined);
    rmSync(agentWork, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    say(`failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
