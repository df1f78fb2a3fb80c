/**
 * `npm run bench:churn`: short jobs through a small cluster, the scenario Slurm 22.05 was measured
 * in on this kind of machine (issue 13; docs/benchmarks/README.md, "bench:churn"). Four agent processes,
 * one node of 8 GPUs each, run every job's real process (`true`) and report at once; every job asks
 * for one GPU. Everything is measured from outside: HTTP answers, and the agents' own RUNNING and
 * end reports read from Kafka (their `at`, the agents' clock, which is this host's).
 *
 * Phases, after a warm-up (and more of it until the broker's JIT compiler is quiet, see warmBroker):
 *   idle      one job at a time on an empty cluster: submit -> process started, p50/p99;
 *   stream    BENCH_JOBS jobs submitted back to back by one client: submit -> start p99, and the
 *             makespan from the first submit to the last job's end;
 *   accept    nodes cordoned: one client creating back to back, then four at once (jobs/s);
 *             what they created is cancelled before the next phase;
 *   burst     BENCH_JOBS jobs queued on cordoned nodes, then all four uncordoned at once:
 *             release -> start p50/p99 and the makespan from release to the last end;
 *   sandbox   the cost of the attempt sandbox (ADR 0033): BENCH_SANDBOX_JOBS idle jobs, in blocks
 *             of ten alternating between one of the four nodes and a fifth, unsandboxed one
 *             (GANTRY_AGENT_SANDBOX=off, cordoned until then), each the only node open: submit ->
 *             RUNNING (reported once the process is asked for) and submit -> end (its process
 *             started, ran `true` and exited), p50/p99 per mode, and the machine's CPU per job.
 * A same-run pgbench single-row INSERT baseline (stack idle) sits beside the figures.
 * Writes .cache/bench/churn-<time>.json; prints a table against Slurm's row in issue 13 and, with
 * BENCH_SLURM_BASELINE=<a bench:churn-slurm JSON>, against Slurm measured on this host (slurm/run.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { LocalKafkaBroker, SERVICES, ServiceProcess, Stack, fleetAgentEnv, fleetStack, kafkaSecurityFor, numberFromEnv as num, waitFor } from '@gantry/stack';
import { freshBenchState, CpuUse, conditions, cpuBetween, cpuSnapshot, runPgbench } from '../api/infra';
import { BrokerWarmup, warmUntilBrokerQuiet } from '../api/broker-warmup';
import { fmt, latencies, table } from '../api/stats';
import { Teardown } from '../dispatch/teardown';
import { Client } from 'pg';
import { cpuProfilerEnv } from '../api/cpu-profiler-env';
import { CommandWatch } from '../dispatch/command-watch';
import { Hops, hopsOf } from './hops';
import { CycleUse, cycleSnapshot, cyclesBetween } from './cycle-steps';
import { batchSnapshot, meanBatches } from '../api/batch-sizes';
import { ReportWatch } from './report-watch';
import { ISSUE_SLURM_ROW as SLURM, beats, churnFigures, churnRowOf, readSlurmReport } from './churn-row';

const config = {
  jobs: num('BENCH_JOBS', 500),
  idleJobs: num('BENCH_IDLE_JOBS', 50),
  warmupJobs: num('BENCH_WARMUP_JOBS', 200),
  /** After the warm-up, more rounds of it until the broker's JIT is quiet, for at most this long; 0: none (a cold broker). */
  brokerWarmupMaxS: num('BENCH_BROKER_WARMUP_MAX_S', 120),
  /** Quiet: the broker's JIT compiler threads used less than this share of one core over the last three rounds. */
  brokerJitQuiet: num('BENCH_BROKER_JIT_QUIET', 0.02),
  acceptSerial: num('BENCH_ACCEPT_SERIAL', 1000),
  acceptParallel: num('BENCH_ACCEPT_PARALLEL', 2000),
  acceptClients: num('BENCH_ACCEPT_CLIENTS', 4),
  /** Jobs of the sandbox phase, half on a sandboxed node, half on an unsandboxed one; 0: no such phase (and no fifth agent). */
  sandboxJobs: num('BENCH_SANDBOX_JOBS', 200),
  agents: num('BENCH_AGENTS', 4),
  pgbenchS: num('BENCH_PGBENCH_S', 10),
  basePort: num('BENCH_BASE_PORT', 19100),
  kafkaPort: num('BENCH_KAFKA_PORT', 39292),
  phaseTimeoutS: num('BENCH_PHASE_TIMEOUT_S', 300),
  databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gantry_bench_churn',
  redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379/13',
  logLevel: process.env.BENCH_LOG_LEVEL || 'warn',
  /** When set, every service writes a V8 CPU profile to <dir>/<service>/<pid>.cpuprofile when it stops (bench/api/cpu-profiler). */
  profileDir: process.env.BENCH_PROFILE_DIR ?? '',
  /** A bench:churn-slurm JSON from this host: its figures are printed beside the issue's row. */
  slurmBaseline: process.env.BENCH_SLURM_BASELINE ?? '',
  /** 1: also time serial creates with the scheduler stopped (what its wake-ups cost the create path). */
  diagnose: num('BENCH_DIAGNOSE', 0),
  /** How the agents start attempts (GANTRY_AGENT_SPAWN, passed through to them; ADR 0032): recorded so runs can be told apart. */
  agentSpawn: process.env.GANTRY_AGENT_SPAWN || 'helper',
};

/** Slurm measured on this host by bench:churn-slurm: a second column beside the issue's row. */
const slurmHere = config.slurmBaseline ? readSlurmReport(config.slurmBaseline) : null;

const root = join(__dirname, '..', '..', '..');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const outFile = join(root, '.cache', 'bench', `churn-${stamp}.json`);
const logDir = join(root, '.cache', 'bench', 'logs', `churn-${stamp}`);
const kafka = new LocalKafkaBroker(root, config.kafkaPort);
const say = (msg: string) => console.error(`[bench:churn] ${new Date().toISOString().slice(11, 19)} ${msg}`);
const adminToken = `bench-admin-${randomBytes(24).toString('base64url')}`;

let stack: Stack | null = null;
const agents: ServiceProcess[] = [];
let kafkaStartedHere = false;
const teardown = new Teardown(say, () => {
  for (const s of [...(stack?.services ?? []), ...agents]) s.kill('SIGKILL');
  if (kafkaStartedHere) spawnSync('bash', [join(root, 'scripts/kafka/stop.sh'), '--port', String(config.kafkaPort)], { stdio: 'inherit' });
});
teardown.installHandlers();

/* ---- HTTP: one keep-alive socket per client, as a CLI or SDK in a loop would use ---- */

interface Answer {
  status: number;
  json: Record<string, unknown> | null;
  retryAfter?: string;
}

function call(agent: Agent, base: string, token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, base),
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'idempotency-key': randomBytes(12).toString('hex') }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let json: Record<string, unknown> | null = null;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString());
          } catch {
            json = null;
          }
          resolve({ status: res.statusCode ?? 0, json, retryAfter: res.headers['retry-after'] });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const profiling = (service: string) => cpuProfilerEnv(config.profileDir, service);

const client = () => new Agent({ keepAlive: true, maxSockets: 1 });

/** One GPU, the real `true`: the job Slurm ran. */
const job = (name: string) => ({ name, image: 'none', command: ['true'], resources: { gpus: 1, cpuCores: 1, memoryMiB: 1024 } });

/* ---- Phases ---- */

/** CPU seconds per process during each phase: where the time goes. */
const cpu: Record<string, CpuUse> = {};
/** The scheduler's cycles and every service's mean batch during each phase. */
const cycles: Record<string, CycleUse> = {};
const batches: Record<string, Record<string, { mean: number; batches: number }>> = {};
async function phase<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const services = (stack?.services ?? []).map((p) => ({ name: p.opts.name, url: p.url }));
  const schedulerUrl = stack?.get('scheduler').url ?? '';
  const [cyclesA, batchesA] = await Promise.all([cycleSnapshot(schedulerUrl), batchSnapshot(services)]);
  const a = cpuSnapshot();
  const out = await fn();
  const b = cpuSnapshot();
  const named: Record<string, number | null | undefined> = { kafka: kafka.pid(), bench: process.pid };
  for (const p of [...(stack?.services ?? []), ...agents]) named[p.opts.name] = p.pid;
  cpu[name] = cpuBetween(a, b, named);
  const [cyclesB, batchesB] = await Promise.all([cycleSnapshot(schedulerUrl), batchSnapshot(services)]);
  cycles[name] = cyclesBetween(cyclesA, cyclesB);
  batches[name] = meanBatches(batchesA, batchesB);
  return out;
}

/** Times `fn` alone, inside a phase: the phase's metrics scrapes before and after are not the clients' time. */
async function timed<T>(fn: () => Promise<T>): Promise<{ out: T; seconds: number }> {
  const t = performance.now();
  const out = await fn();
  return { out, seconds: (performance.now() - t) / 1000 };
}

interface Submitted {
  id: string;
  sentAtMs: number;
}

/** Creates `n` jobs back to back from one client; throws on any refusal (the bench's budget is above them). */
/** Creates refused with 503/429 and sent again (see submitSerially). */
let refusals = 0;

async function submitSerially(base: string, token: string, name: string, n: number, onEach?: (s: Submitted) => void): Promise<Submitted[]> {
  const a = client();
  const out: Submitted[] = [];
  for (let i = 0; i < n; i++) {
    teardown.check();
    const sentAtMs = Date.now();
    let r = await call(a, base, token, 'POST', '/v1/jobs', job(name));
    // Refused (the gateway sheds creates while its event loop lags, contract 4.3): wait as told and
    // send again, as the CLI and GantryClient do. Counted, and the wait counts against the rate.
    while (r.status === 503 || r.status === 429) {
      refusals++;
      await new Promise((ok) => setTimeout(ok, 1000 * Math.min(5, Number(r.retryAfter) || 1)));
      r = await call(a, base, token, 'POST', '/v1/jobs', job(name));
    }
    if (r.status !== 201) throw new Error(`POST /v1/jobs answered ${r.status}: ${JSON.stringify(r.json)}`);
    const s = { id: String(r.json!.id), sentAtMs };
    out.push(s);
    onEach?.(s);
  }
  a.destroy();
  return out;
}

function until<T>(what: string, probe: () => Promise<T | false | undefined> | T | false | undefined, intervalMs = 20): Promise<T> {
  return waitFor(
    what,
    async () => {
      teardown.check();
      return probe();
    },
    { timeoutMs: config.phaseTimeoutS * 1000, intervalMs },
  );
}

/**
 * Rounds of `BENCH_WARMUP_JOBS` more jobs until the broker's JIT compiler is quiet
 * (`BENCH_BROKER_JIT_QUIET` of a core over three rounds) or `BENCH_BROKER_WARMUP_MAX_S` have passed
 * (warmUntilBrokerQuiet); the phases then measure serving.
 */
async function warmBroker(base: string, token: string, watch: ReportWatch): Promise<BrokerWarmup | null> {
  const pid = kafka.pid();
  if (pid === null || config.brokerWarmupMaxS <= 0) return null;
  return warmUntilBrokerQuiet(
    pid,
    async () => {
      const ids = (await submitSerially(base, token, 'churn-warmup', config.warmupJobs)).map((j) => j.id);
      await until('warm-up round ended', () => watch.countEnded(ids) === ids.length);
    },
    { maxS: config.brokerWarmupMaxS, jitQuietCores: config.brokerJitQuiet },
  );
}

async function idlePhase(base: string, token: string, watch: ReportWatch, hops: (ids: string[], sentAtMs: ReadonlyMap<string, number>) => Promise<Hops>) {
  const a = client();
  const lat: number[] = [];
  const sent = new Map<string, number>();
  for (let i = 0; i < config.idleJobs; i++) {
    const sentAtMs = Date.now();
    const r = await call(a, base, token, 'POST', '/v1/jobs', job('churn-idle'));
    if (r.status !== 201) throw new Error(`POST /v1/jobs answered ${r.status}`);
    const id = String(r.json!.id);
    sent.set(id, sentAtMs);
    await until(`idle job ${i} ended`, () => watch.endedAt(id) !== null, 5);
    lat.push(watch.startedAt(id)! - sentAtMs);
  }
  a.destroy();
  return { submitToStartMs: latencies(lat), hops: await hops([...sent.keys()], sent) };
}

/** The fifth agent's prefix: its node runs attempts unsandboxed, the sandbox phase's baseline. */
const UNSANDBOXED_PREFIX = 'churnoff';

/**
 * Idle jobs in blocks of ten, alternating between a sandboxed node and the unsandboxed one, each
 * the only node open while its block runs (drift on the host lands on both modes alike).
 */
async function sandboxPhase(base: string, token: string, watch: ReportWatch, [sandboxedId, unsandboxedId]: [string, string], allIds: string[]) {
  const BLOCK = 10;
  const lat = {
    sandboxed: { run: [] as number[], end: [] as number[], cpuS: 0, jobs: 0 },
    unsandboxed: { run: [] as number[], end: [] as number[], cpuS: 0, jobs: 0 },
  };
  await setCordon(base, allIds, true);
  const a = client();
  const blocks = Math.ceil(config.sandboxJobs / BLOCK);
  for (let b = 0; b < blocks; b++) {
    const mode = b % 2 === 0 ? 'sandboxed' : 'unsandboxed';
    const node = mode === 'sandboxed' ? sandboxedId : unsandboxedId;
    await setCordon(base, [node], false);
    const before = cpuSnapshot();
    for (let i = 0; i < BLOCK; i++) {
      const sentAtMs = Date.now();
      const r = await call(a, base, token, 'POST', '/v1/jobs', job('churn-sandbox'));
      if (r.status !== 201) throw new Error(`POST /v1/jobs answered ${r.status}`);
      const id = String(r.json!.id);
      await until(`sandbox job ${b}/${i} ended`, () => watch.endedAt(id) !== null, 5);
      lat[mode].run.push(watch.startedAt(id)! - sentAtMs);
      lat[mode].end.push(watch.endedAt(id)! - sentAtMs);
    }
    const use = cpuBetween(before, cpuSnapshot(), {});
    lat[mode].cpuS += use.machineBusy * use.wallS * cpus().length;
    lat[mode].jobs += BLOCK;
    await setCordon(base, [node], true);
  }
  a.destroy();
  await setCordon(
    base,
    allIds.filter((id) => id !== unsandboxedId),
    false,
  );
  const of = (m: typeof lat.sandboxed) => ({
    jobs: m.jobs,
    toRunningMs: latencies(m.run),
    toEndMs: latencies(m.end),
    cpuMsPerJob: (m.cpuS * 1000) / Math.max(1, m.jobs),
  });
  const sandboxed = of(lat.sandboxed);
  const unsandboxed = of(lat.unsandboxed);
  return {
    sandboxed,
    unsandboxed,
    added: {
      toRunningP50: sandboxed.toRunningMs.p50 - unsandboxed.toRunningMs.p50,
      toRunningP99: sandboxed.toRunningMs.p99 - unsandboxed.toRunningMs.p99,
      toEndP50: sandboxed.toEndMs.p50 - unsandboxed.toEndMs.p50,
      toEndP99: sandboxed.toEndMs.p99 - unsandboxed.toEndMs.p99,
      cpuMsPerJob: sandboxed.cpuMsPerJob - unsandboxed.cpuMsPerJob,
    },
  };
}

async function streamPhase(base: string, token: string, watch: ReportWatch, hops: (ids: string[], sentAtMs: ReadonlyMap<string, number>) => Promise<Hops>) {
  const jobs = await submitSerially(base, token, 'churn-stream', config.jobs);
  const ids = jobs.map((j) => j.id);
  await until('stream jobs ended', () => watch.countEnded(ids) === ids.length);
  const first = jobs[0].sentAtMs;
  const lastEnd = Math.max(...ids.map((id) => watch.endedAt(id)!));
  return {
    submitToStartMs: latencies(jobs.map((j) => watch.startedAt(j.id)! - j.sentAtMs)),
    submitSeconds: (jobs[jobs.length - 1].sentAtMs - first) / 1000,
    makespanS: (lastEnd - first) / 1000,
    failed: ids.filter((id) => watch.jobs.get(id)?.state !== 'SUCCEEDED').length,
    hops: await hops(ids, new Map(jobs.map((j) => [j.id, j.sentAtMs]))),
  };
}

async function setCordon(base: string, nodeIds: string[], cordoned: boolean): Promise<void> {
  const a = new Agent({ keepAlive: true, maxSockets: nodeIds.length });
  const answers = await Promise.all(nodeIds.map((n) => call(a, base, adminToken, 'POST', `/v1/nodes/${n}/${cordoned ? 'cordon' : 'uncordon'}`)));
  a.destroy();
  const bad = answers.find((r) => r.status >= 300);
  if (bad) throw new Error(`cordon/uncordon answered ${bad.status}: ${JSON.stringify(bad.json)}`);
}

/** Out of the way of the next phase: jobs cancelled while still queued end at once. */
async function cancelAll(base: string, token: string, ids: string[]): Promise<void> {
  const lanes = 8;
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      const a = client();
      for (let i = lane; i < ids.length; i += lanes) {
        const r = await call(a, base, token, 'POST', `/v1/jobs/${ids[i]}/cancel`);
        if (r.status >= 300) throw new Error(`cancel answered ${r.status}`);
      }
      a.destroy();
    }),
  );
}

async function acceptPhase(base: string, token: string) {
  const { out: serial, seconds: serialS } = await phase('accept-serial', () => timed(() => submitSerially(base, token, 'churn-accept', config.acceptSerial)));
  const per = Math.ceil(config.acceptParallel / config.acceptClients);
  const { out: parallel, seconds: parallelS } = await phase('accept-parallel', () =>
    timed(async () => (await Promise.all(Array.from({ length: config.acceptClients }, () => submitSerially(base, token, 'churn-accept', per)))).flat()),
  );
  await cancelAll(
    base,
    token,
    [...serial, ...parallel].map((s) => s.id),
  );
  return {
    serial: { jobs: serial.length, seconds: serialS, perS: serial.length / serialS },
    parallel: { clients: config.acceptClients, jobs: parallel.length, seconds: parallelS, perS: parallel.length / parallelS },
  };
}

async function burstPhase(
  base: string,
  token: string,
  nodeIds: string[],
  watch: ReportWatch,
  queuedCount: () => Promise<number>,
  hops: (ids: string[]) => Promise<Hops>,
) {
  const jobs = await submitSerially(base, token, 'churn-burst', config.jobs);
  const ids = jobs.map((j) => j.id);
  await until('burst jobs all QUEUED', async () => (await queuedCount()) >= ids.length, 50);
  const releasedAtMs = Date.now();
  await setCordon(base, nodeIds, false);
  await until('burst jobs ended', () => watch.countEnded(ids) === ids.length);
  const lastEnd = Math.max(...ids.map((id) => watch.endedAt(id)!));
  return {
    releaseToStartMs: latencies(ids.map((id) => watch.startedAt(id)! - releasedAtMs)),
    makespanS: (lastEnd - releasedAtMs) / 1000,
    jobsPerS: ids.length / ((lastEnd - releasedAtMs) / 1000),
    failed: ids.filter((id) => watch.jobs.get(id)?.state !== 'SUCCEEDED').length,
    hops: await hops(ids),
  };
}

/* ---- Main ---- */

async function main(): Promise<void> {
  say(`config ${JSON.stringify(config)}`);
  kafkaStartedHere = await kafka.startIfAbsent();
  if (kafkaStartedHere) teardown.add(`Kafka on ${kafka.brokers}`, () => kafka.stop());
  await freshBenchState(root, kafka, config.databaseUrl, config.redisUrl);
  teardown.check();

  const work = mkdtempSync(join(tmpdir(), 'gantry-bench-churn-'));
  teardown.add('agent work dirs', async () => rmSync(work, { recursive: true, force: true }));
  const prefixes = Array.from({ length: config.agents }, (_, i) => `churn${String.fromCharCode(97 + i)}`);
  const s = fleetStack({
    root,
    logDir,
    basePort: config.basePort,
    adminToken,
    kafkaCredentials: kafka.credentials(),
    infra: { kafkaBrokers: kafka.brokers, databaseUrl: config.databaseUrl, redisUrl: config.redisUrl },
    env: {
      LOG_LEVEL: config.logLevel,
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
      GANTRY_HEARTBEAT_MS: '1000',
      GANTRY_RATE_LIMIT_RPS: '5000',
      GANTRY_RATE_LIMIT_BURST: '10000',
    },
    fleet: { nodes: 1, prefix: prefixes[0], executor: 'process', workDir: join(work, prefixes[0]) },
    serviceEnv: Object.fromEntries(SERVICES.map((name) => [name, profiling(name)])),
  });
  stack = s;
  teardown.add('services', () => s.stop());
  await s.start();
  for (const p of prefixes.slice(1)) {
    const a = s.extra(`node-agent-${p}`, 'node-agent', {
      ...fleetAgentEnv({ nodes: 1, prefix: p, executor: 'process', workDir: join(work, p) }),
      ...profiling(`node-agent-${p}`),
    });
    agents.push(a);
    teardown.add(`agent ${p}`, () => a.stop());
    a.start();
  }
  // The sandbox phase's baseline: a fifth node whose agent runs attempts unsandboxed, cordoned until then.
  const unsandboxedId = `${UNSANDBOXED_PREFIX}-00000`;
  if (config.sandboxJobs > 0) {
    const a = s.extra(`node-agent-${UNSANDBOXED_PREFIX}`, 'node-agent', {
      ...fleetAgentEnv({ nodes: 1, prefix: UNSANDBOXED_PREFIX, executor: 'process', workDir: join(work, UNSANDBOXED_PREFIX) }),
      GANTRY_AGENT_SANDBOX: 'off',
      ...profiling(`node-agent-${UNSANDBOXED_PREFIX}`),
    });
    agents.push(a);
    teardown.add(`agent ${UNSANDBOXED_PREFIX}`, () => a.stop());
    a.start();
  }
  await Promise.all(agents.map((a) => a.ready(120_000)));
  const nodeIds = prefixes.map((p) => `${p}-00000`);
  const base = s.gatewayUrl;
  const admin = new Agent({ keepAlive: true });
  await until(
    'every node of 8 GPUs HEALTHY',
    async () => {
      const r = await call(admin, base, adminToken, 'GET', '/v1/cluster/summary');
      return Number((r.json?.nodesByHealth as Record<string, number> | undefined)?.HEALTHY ?? 0) >= nodeIds.length + (config.sandboxJobs > 0 ? 1 : 0);
    },
    500,
  );
  if (config.sandboxJobs > 0) await setCordon(base, [unsandboxedId], true);
  const minted = await call(admin, base, adminToken, 'POST', '/v1/tokens', { owner: 'bench', role: 'user' });
  if (minted.status !== 201) throw new Error(`POST /v1/tokens answered ${minted.status}`);
  const token = String(minted.json!.token);

  const watch = new ReportWatch(kafka.brokers, kafkaSecurityFor(kafka.credentials()), `bench-churn-${stamp}`);
  teardown.add('report watch', () => watch.stop());
  await watch.start();
  await until('report watch positioned', () => watch.positioned, 100);
  const runs = new CommandWatch(kafka.brokers, kafkaSecurityFor(kafka.credentials()), `bench-churn-runs-${stamp}`);
  teardown.add('command watch', () => runs.stop());
  await runs.start();
  await until('command watch positioned', () => runs.positioned, 100);
  const db = new Client({ connectionString: config.databaseUrl, application_name: 'gantry-bench-churn' });
  await db.connect();
  teardown.add('bench database connection', () => db.end());
  // The relay's and the reconciler's commits settle a moment after the agents' reports.
  const hops = async (ids: string[], sentAtMs?: ReadonlyMap<string, number>) => {
    await until(
      'every end applied in Postgres',
      async () => Number((await db.query(`SELECT count(*) AS n FROM jobs WHERE id = ANY($1::uuid[]) AND finished_at IS NULL`, [ids])).rows[0].n) === 0,
      100,
    );
    return hopsOf(db, ids, runs, watch, sentAtMs);
  };

  const queuedCount = async () => {
    const r = await call(admin, base, adminToken, 'GET', '/v1/cluster/summary');
    return Number((r.json?.jobsByState as Record<string, number> | undefined)?.QUEUED ?? 0);
  };

  say(`warm-up: ${config.warmupJobs} jobs`);
  const warm = await submitSerially(base, token, 'churn-warmup', config.warmupJobs);
  await until('warm-up jobs ended', () => watch.countEnded(warm.map((w) => w.id)) === warm.length);
  const brokerWarmup = await warmBroker(base, token, watch);
  if (brokerWarmup) {
    say(
      `broker warm-up: ${brokerWarmup.rounds} more rounds in ${brokerWarmup.seconds.toFixed(1)} s, its JIT ${brokerWarmup.jitS.toFixed(2)} CPU s; ` +
        `${(brokerWarmup.lastRoundsJitCores * 100).toFixed(1)} % of a core over the last three (${brokerWarmup.quiet ? 'quiet' : 'not quiet yet'})`,
    );
  }

  const cond = await conditions(root, config.databaseUrl, config.kafkaPort);
  say(`pgbench baseline (${config.pgbenchS} s, stack idle)`);
  const pgbench = await runPgbench(config.databaseUrl, { durationS: config.pgbenchS, clients: 1, threads: 1 });
  const loadBefore = loadavg();

  say('idle: one job at a time');
  const idle = await phase('idle', () => idlePhase(base, token, watch, hops));
  say(`idle: submit -> start p50 ${idle.submitToStartMs.p50} ms, p99 ${idle.submitToStartMs.p99} ms`);
  say(`stream: ${config.jobs} jobs back to back`);
  const stream = await phase('stream', () => streamPhase(base, token, watch, hops));
  say(`stream: makespan ${stream.makespanS.toFixed(2)} s, submit -> start p99 ${stream.submitToStartMs.p99} ms`);
  await setCordon(base, nodeIds, true);
  say('accept: nodes cordoned');
  let acceptWithoutScheduler: { jobs: number; perS: number } | null = null;
  if (config.diagnose) {
    await s.get('scheduler').stop();
    const { out: made, seconds } = await phase('accept-serial-no-scheduler', () =>
      timed(() => submitSerially(base, token, 'churn-accept', config.acceptSerial)),
    );
    acceptWithoutScheduler = { jobs: made.length, perS: made.length / seconds };
    await cancelAll(
      base,
      token,
      made.map((m) => m.id),
    );
    say(`accept, scheduler stopped: ${acceptWithoutScheduler.perS.toFixed(0)}/s one client`);
    s.get('scheduler').start();
    await s.get('scheduler').ready(60_000);
  }
  const accept = await acceptPhase(base, token);
  say(`accept: ${accept.serial.perS.toFixed(0)}/s one client, ${accept.parallel.perS.toFixed(0)}/s ${config.acceptClients} clients`);
  await until('accept jobs cancelled', async () => (await queuedCount()) === 0, 100);
  say(`burst: ${config.jobs} jobs queued, then released`);
  const burst = await phase('burst', () => burstPhase(base, token, nodeIds, watch, queuedCount, hops));
  say(`burst: makespan ${burst.makespanS.toFixed(2)} s, release -> start p99 ${burst.releaseToStartMs.p99} ms`);
  const sandbox = config.sandboxJobs > 0 ? await sandboxPhase(base, token, watch, [nodeIds[0], unsandboxedId], [...nodeIds, unsandboxedId]) : null;
  if (sandbox)
    say(
      `sandbox: added submit -> RUNNING p50 ${sandbox.added.toRunningP50} ms, p99 ${sandbox.added.toRunningP99} ms; submit -> end p50 ${sandbox.added.toEndP50} ms, p99 ${sandbox.added.toEndP99} ms`,
    );
  admin.destroy();

  const here = slurmHere ? churnRowOf(slurmHere) : null;
  const report = {
    bench: 'churn',
    startedAt: stamp,
    config,
    conditions: { ...cond, loadAvgBefore: loadBefore, loadAvgAtEnd: loadavg(), command: 'npm run bench:churn' },
    pgbench: { tps: pgbench.tps, latencyAvgMs: pgbench.latencyAvgMs, command: pgbench.command },
    brokerWarmup,
    idle,
    stream,
    accept,
    acceptWithoutScheduler,
    burst,
    sandbox,
    refusals,
    cpu,
    cycles,
    batches,
    slurm: SLURM,
    slurmHere: here ? { file: config.slurmBaseline, startedAt: slurmHere!.startedAt, ...here } : null,
    logs: relative(root, logDir),
  };
  mkdirSync(join(root, '.cache', 'bench'), { recursive: true });
  writeFileSync(outFile, JSON.stringify(report, null, 2));
  const gantry = churnRowOf({ startedAt: stamp, accept, idle, stream, burst });
  console.log(
    table([
      [
        'figure',
        'Slurm (issue 13)',
        ...(here ? [`Slurm (this host, ${slurmHere!.startedAt})`] : []),
        'Gantry',
        'better?',
        ...(here ? ['better than here?'] : []),
      ],
      ...churnFigures(config).map((fig) => [
        fig.label,
        fig.format(SLURM[fig.key]),
        ...(here ? [fig.format(here[fig.key])] : []),
        fig.format(gantry[fig.key]),
        String(beats(fig, gantry, SLURM)),
        ...(here ? [String(beats(fig, gantry, here))] : []),
      ]),
    ]),
  );
  const hopRow = (name: string, h: Hops) => {
    const f = (s: { p50: number; p99: number } | null) => (s ? `${fmt(s.p50, 0)} / ${fmt(s.p99, 0)}` : '-');
    return [name, f(h.sentToCreated), f(h.createdToPlaced), f(h.placedToRunPublished), f(h.runPublishedToStarted), f(h.endedToApplied), f(h.freedToPlaced)];
  };
  console.log('');
  console.log(
    table([
      ['hops, ms p50 / p99', 'sent -> created', 'created -> placed', 'placed -> RUN sent', 'RUN sent -> started', 'ended -> applied', 'freed -> placed'],
      hopRow('idle', idle.hops),
      hopRow('stream', stream.hops),
      hopRow('burst', burst.hops),
    ]),
  );
  for (const [name, use] of Object.entries(cpu)) {
    console.log(
      `cpu ${name} (${use.wallS} s, machine ${(use.machineBusy * 100).toFixed(0)}% busy): ` +
        Object.entries(use.components)
          .slice(0, 8)
          .map(([k, v]) => `${k} ${v.cpuS}`)
          .join(', '),
    );
  }
  for (const [name, c] of Object.entries(cycles)) {
    const steps = Object.entries(c.stepMs)
      .slice(0, 6)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    const mean = Object.entries(batches[name] ?? {})
      .map(([k, v]) => `${k} ${v.mean}`)
      .join(', ');
    console.log(
      `scheduler ${name}: ${c.cycles} cycles, ${c.meanMs} ms each (${steps}), ${c.placedPerCycle} placed per cycle, ${c.lostRaces} placements lost; mean batches: ${mean || '-'}`,
    );
  }
  console.log(
    brokerWarmup
      ? `broker warmed before the phases: ${brokerWarmup.rounds} rounds of ${config.warmupJobs} jobs, ${brokerWarmup.seconds.toFixed(1)} s, its JIT ${brokerWarmup.jitS.toFixed(2)} CPU s, ` +
          `the last three rounds ${(brokerWarmup.lastRoundsJitCores * 100).toFixed(1)} % of a core (${brokerWarmup.quiet ? 'quiet' : 'not quiet yet'})`
      : 'broker not warmed before the phases (BENCH_BROKER_WARMUP_MAX_S=0, or not its pid)',
  );
  if (sandbox) {
    const row = (mode: 'sandboxed' | 'unsandboxed') => {
      const m = sandbox[mode];
      return [
        mode,
        `${fmt(m.toRunningMs.p50, 0)} / ${fmt(m.toRunningMs.p99, 0)}`,
        `${fmt(m.toEndMs.p50, 0)} / ${fmt(m.toEndMs.p99, 0)}`,
        fmt(m.cpuMsPerJob, 1),
      ];
    };
    console.log('');
    console.log(
      table([
        ['sandbox phase (same run, alternating blocks)', 'submit -> RUNNING ms p50 / p99', 'submit -> end ms p50 / p99', 'machine CPU ms per job'],
        row('sandboxed'),
        row('unsandboxed'),
      ]),
    );
  }
  console.log(`creates refused (503/429) and sent again after Retry-After: ${refusals}`);
  console.log(`pgbench single-row INSERT, 1 client, same run: ${fmt(pgbench.tps, 0)} tps; written ${relative(root, outFile)}`);
}

teardown.runMain(main);
