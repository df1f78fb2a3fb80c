/**
 * `npm run bench:dispatch`: how fast jobs go from POST /v1/jobs to a RUN command on Kafka, and how
 * fast the scheduler drains a backlog, against a whole local stack that this script starts and stops
 * itself. See docs/benchmarks/README.md, "bench:dispatch".
 *
 * What it brings up, all on this host:
 *   - its own Kafka broker on BENCH_KAFKA_PORT (39192), stopped at the end unless it was already running;
 *   - its own database (gantry_bench_dispatch, dropped, recreated and migrated) and topics;
 *   - Redis logical db 14 (flushed);
 *   - the five services as processes (ports from BENCH_BASE_PORT, 18900), one replica each, the agent
 *     simulating BENCH_NODES (50,000) nodes (racks of 20 over three zones, H100/A100/L4/CPU-only mix)
 *     with the `sleep` executor, beating every BENCH_HEARTBEAT_MS (60 s, see config.ts).
 *
 * Phases, after every node is registered and HEALTHY:
 *   1. fixed rate: BENCH_RATE submissions/s for BENCH_RATE_S s (short jobs, mostly one GPU, a few
 *      gangs). Dispatch latency per job = its RUN command's Kafka timestamp - its created_at.
 *   2. backlog: the scheduler is stopped, BENCH_BACKLOG one-GPU jobs are submitted as fast as the
 *      gateway takes them, the scheduler is started again and timed until none is QUEUED.
 *   3. preemption (BENCH_PHASES with preemption): the fleet filled with low-band work, 5 % of the
 *      submissions high-band 8-GPU jobs that must preempt; submit -> KILL -> RUN (preemption-phase.ts).
 * CPU seconds per process come from /proc for every phase. Prints a table and writes everything to
 * .cache/bench/dispatch-<time>.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Client } from 'pg';
import { TOPIC_PARTITIONS } from '@gantry/contracts';
import { LocalKafkaBroker, Stack, fleetStack, kafkaSecurityFor, waitFor } from '@gantry/stack';
import { freshBenchState, CpuSnapshot, PgbenchResult, conditions, cpuBetween, cpuSnapshot, runPgbench } from '../api/infra';
import { runCreatePhase } from '../api/load';
import { measuredPart, runOpenLoop } from '../api/open-loop';
import { summarisePhase } from '../api/stats';
import { DrainSampler, metricSeries, placementTimes, runTimes, seriesOf } from './backlog-drain';
import { CommandWatch } from './command-watch';
import { inheritedGantryEnv, loadConfig } from './config';
import { DispatchReport, dispatchLatency } from './dispatch-latency';
import {
  BACKLOG_JOB_NAME,
  CURVE_JOB_NAME,
  CURVE_WARMUP_JOB_NAME,
  GANG_JOB_NAME,
  PROBE_JOB_NAME,
  RATE_JOB_NAME,
  RATE_WARMUP_JOB_NAME,
  rateBodies,
  singleGpuJob,
} from './job-mix';
import { runCurve } from './open-loop-curve';
import { DoorRefusals, doorRefusals, refusalsBetween } from './door-refusals';
import { warmStack } from './stack-warmup';
import { bigGangJob, measureGangMemory } from './gang-memory';
import { DispatchResults, floorVerdicts, printReport } from './report';
import { Teardown } from './teardown';
import { runPreemptionPhase } from './preemption-phase';

const config = loadConfig();
const root = join(__dirname, '..', '..', '..');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const outFile = join(root, '.cache', 'bench', `dispatch-${stamp}.json`);
const logDir = join(root, '.cache', 'bench', 'logs', `dispatch-${stamp}`);
const kafka = new LocalKafkaBroker(root, config.kafkaPort);
const brokers = kafka.brokers;
const say = (msg: string) => console.error(`[bench:dispatch] ${new Date().toISOString().slice(11, 19)} ${msg}`);

let stack: Stack | null = null;
let kafkaStartedHere = false;
const teardown = new Teardown(say, () => {
  for (const s of stack?.services ?? []) s.kill('SIGKILL');
  if (kafkaStartedHere) spawnSync('bash', [join(root, 'scripts/kafka/stop.sh'), '--port', String(config.kafkaPort)], { stdio: 'inherit' });
});
teardown.installHandlers();

/* ---- The stack ---- */

let pgbench: PgbenchResult | null = null;

async function prepare(): Promise<Stack> {
  say(`Kafka on ${brokers}`);
  kafkaStartedHere = await kafka.startIfAbsent();
  if (kafkaStartedHere) teardown.add(`Kafka on ${brokers}`, () => kafka.stop());
  else say(`a broker already listens on ${brokers}: using it and leaving it running`);
  teardown.check();

  say(`database ${new URL(config.databaseUrl).pathname.slice(1)} (recreated), Redis ${config.redisUrl} (flushed), topics`);
  await freshBenchState(root, kafka, config.databaseUrl, config.redisUrl);
  teardown.check();
  // The same-run baseline every figure is read against, taken before the services and the fleet
  // start so that their load does not colour it (one client, as bench:churn's).
  if (config.pgbenchS > 0) {
    say(`pgbench baseline (${config.pgbenchS} s, one client, nothing else of the bench running)`);
    pgbench = await runPgbench(config.databaseUrl, { durationS: config.pgbenchS, clients: 1, threads: 1 });
    say(`pgbench: ${Math.round(pgbench.tps)} tps`);
  }

  const agentWork = mkdtempSync(join(tmpdir(), 'gantry-bench-dispatch-'));
  teardown.add('agent work dir', async () => rmSync(agentWork, { recursive: true, force: true }));
  const s = fleetStack({
    root,
    logDir,
    basePort: config.basePort,
    adminToken,
    kafkaCredentials: kafka.credentials(),
    readyTimeoutMs: 300_000,
    infra: { kafkaBrokers: brokers, databaseUrl: config.databaseUrl, redisUrl: config.redisUrl },
    env: {
      LOG_LEVEL: config.logLevel,
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
      GANTRY_HEARTBEAT_MS: String(config.heartbeatMs),
      GANTRY_NODE_SUSPECT_MS: String(config.nodeSuspectMs),
      GANTRY_NODE_DEAD_MS: String(config.nodeDeadMs),
      // The backlog phase submits as fast as its connections go: above the default per-token budget
      // (1,000/s), which would refuse part of the backlog with 429s (ADR 0016).
      GANTRY_RATE_LIMIT_RPS: String(config.rateLimitRps),
      GANTRY_RATE_LIMIT_BURST: String(2 * config.rateLimitRps),
      GANTRY_PREEMPTION_GRACE_MS: String(config.preemptGraceMs),
    },
    fleet: { nodes: config.nodes, prefix: 'bench', executor: 'sleep', workDir: agentWork },
  });
  stack = s;
  teardown.add('services', () => s.stop());
  say(`services on ${config.basePort}..${config.basePort + 4} (logs ${relative(root, logDir)})`);
  await s.start();
  teardown.check();
  return s;
}

const adminToken = `bench-admin-${randomBytes(24).toString('base64url')}`;

async function api(gatewayUrl: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as Record<string, unknown> | null };
}

/** Polls with a deadline; the bench's Ctrl-C ends the wait too. */
function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | false | undefined>, intervalMs = 500): Promise<T> {
  return waitFor(
    what,
    async () => {
      teardown.check();
      return probe();
    },
    { timeoutMs, intervalMs },
  );
}

/** Every simulated node registered (a row in `nodes`) and HEALTHY by the gateway's summary. */
async function waitForFleet(gatewayUrl: string, db: Client): Promise<{ seconds: number; gpus: number }> {
  const t0 = Date.now();
  say(`waiting for ${config.nodes} nodes to register and be HEALTHY`);
  let last = '';
  await until(
    `${config.nodes} nodes registered and HEALTHY`,
    config.registerTimeoutS * 1000,
    async () => {
      const registered = Number((await db.query(`SELECT count(*) AS n FROM nodes`)).rows[0].n);
      const summary = await api(gatewayUrl, adminToken, 'GET', '/v1/cluster/summary');
      const healthy = Number((summary.json?.nodesByHealth as Record<string, number> | undefined)?.HEALTHY ?? 0);
      const now = `${registered} registered, ${healthy} healthy`;
      if (now !== last) say(`fleet: ${now}`);
      last = now;
      return registered >= config.nodes && healthy >= config.nodes;
    },
    1000,
  );
  const gpus = Number((await db.query(`SELECT coalesce(sum(gpus_total), 0) AS n FROM nodes`)).rows[0].n);
  return { seconds: (Date.now() - t0) / 1000, gpus };
}

function servicePids(s: Stack): Record<string, number | null | undefined> {
  return {
    'api-gateway': s.get('api-gateway').pid,
    scheduler: s.get('scheduler').pid,
    'heartbeat-ingester': s.get('heartbeat-ingester').pid,
    reconciler: s.get('reconciler').pid,
    'node-agent': s.get('node-agent').pid,
    kafka: kafka.pid(),
    'bench (autocannon, watch)': process.pid,
  };
}

/** Waits until none of the named jobs is QUEUED/SCHEDULED/RUNNING; returns how long it took and what is left. */
async function drainJobs(db: Client, name: string, label: string, timeoutS: number): Promise<{ drained: boolean; seconds: number; open: number }> {
  const t0 = Date.now();
  let open = 0;
  let drained = true;
  try {
    await until(
      `drain after ${label}`,
      timeoutS * 1000,
      async () => {
        open = Number((await db.query(`SELECT count(*) AS n FROM jobs WHERE name = $1 AND state IN ('QUEUED','SCHEDULED','RUNNING')`, [name])).rows[0].n);
        return open === 0;
      },
      1000,
    );
  } catch (e) {
    if (teardown.interrupted) throw e;
    drained = false;
    say(`${(e as Error).message}: ${open} jobs still open; going on`);
  }
  const seconds = (Date.now() - t0) / 1000;
  say(`drain after ${label}: ${drained ? 'done' : 'NOT done'} in ${seconds.toFixed(1)} s`);
  return { drained, seconds, open };
}

/* ---- Main ---- */

async function main(): Promise<void> {
  say(`config ${JSON.stringify(config)}`);
  const t0 = Date.now();
  const s = await prepare();
  const db = new Client({ connectionString: config.databaseUrl, application_name: 'gantry-bench-dispatch' });
  await db.connect();
  teardown.add('bench database connection', () => db.end());
  const fleet = await waitForFleet(s.gatewayUrl, db);
  say(`fleet ready in ${fleet.seconds.toFixed(0)} s: ${config.nodes} nodes, ${fleet.gpus} GPUs`);
  const cond = await conditions(root, config.databaseUrl, config.kafkaPort);

  const minted = await api(s.gatewayUrl, adminToken, 'POST', '/v1/tokens', { owner: 'bench', role: 'user' });
  if (minted.status !== 201) throw new Error(`POST /v1/tokens answered ${minted.status}: ${JSON.stringify(minted.json)}`);
  const token = String(minted.json!.token);

  // The watch joins before any load; a probe job proves it sees RUN commands end to end.
  const watch = new CommandWatch(brokers, kafkaSecurityFor(kafka.credentials()), `bench-dispatch-${stamp}`);
  teardown.add('command watch', () => watch.stop());
  await watch.start();
  await until('command watch joined and positioned', 60_000, async () => watch.positioned);
  const probe = await api(s.gatewayUrl, token, 'POST', '/v1/jobs', singleGpuJob(PROBE_JOB_NAME, 100), { 'Idempotency-Key': `probe-${stamp}` });
  if (probe.status !== 201) throw new Error(`probe job: ${probe.status} ${JSON.stringify(probe.json)}`);
  await until('the probe job RUN seen on Kafka', 60_000, async () => watch.dispatchedAt(String(probe.json!.id)) !== null);
  say(`stack ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

  // What the fleet's heartbeats and the idle services cost by themselves.
  const idleA = cpuSnapshot();
  await new Promise((r) => setTimeout(r, config.idleS * 1000));
  const idleCpu = cpuBetween(idleA, cpuSnapshot(), servicePids(s));
  teardown.check();

  /* One 1,024-rank gang with a 64 KiB env: the scheduler's peak memory (issue 12). */
  let gang: DispatchResults['gang'] = null;
  if (config.phases.includes('gang')) {
    const ranks = Math.min(config.gangRanks, 1024);
    const { body, envBytes } = bigGangJob(GANG_JOB_NAME, ranks);
    say(`gang: one gang of ${ranks} whole H100 nodes, env ${envBytes} bytes`);
    gang = await measureGangMemory(
      s.get('scheduler').pid!,
      async () => {
        const r = await api(s.gatewayUrl, token, 'POST', '/v1/jobs', body, { 'Idempotency-Key': `gang-${stamp}` });
        if (r.status !== 201) throw new Error(`gang job: ${r.status} ${JSON.stringify(r.json)}`);
        return String(r.json!.id);
      },
      watch,
      ranks,
      envBytes,
      (what, probe) => until(what, 300_000, async () => (await probe()) || undefined),
    );
    say(`gang: RUNs all seen after ${gang.dispatchedAfterS ?? '-'} s; scheduler peak RSS ${gang.before.hwmMiB} -> ${gang.after.hwmMiB} MiB`);
    const cancel = await api(
      s.gatewayUrl,
      token,
      'POST',
      `/v1/jobs/${(await db.query(`SELECT id FROM jobs WHERE name = $1`, [GANG_JOB_NAME])).rows[0].id}/cancel`,
    );
    if (cancel.status >= 300) say(`gang: cancel answered ${cancel.status}`);
    await drainJobs(db, GANG_JOB_NAME, 'the gang', config.rateDrainTimeoutS);
  }

  /* The open-loop curve. */
  let curve: DispatchResults['curve'] = null;
  let curveWarmup: DispatchResults['curveWarmup'] = null;
  if (config.phases.includes('curve')) {
    const warmBody = JSON.stringify(singleGpuJob(CURVE_WARMUP_JOB_NAME, config.rateSimDurationMs));
    curveWarmup = await warmStack(
      { baseUrl: s.gatewayUrl, token, body: () => warmBody },
      {
        brokerPid: kafka.pid(),
        rate: config.curveWarmRate,
        roundS: config.curveWarmRoundS,
        maxS: config.brokerWarmupMaxS,
        jitQuietCores: config.brokerJitQuiet,
        maxSockets: config.openLoopSockets,
      },
      () => teardown.check(),
    );
    if (curveWarmup) {
      say(
        `stack warm-up at ${curveWarmup.rate}/s: ${curveWarmup.rounds} rounds in ${curveWarmup.seconds.toFixed(0)} s, the broker's JIT ${curveWarmup.jitS.toFixed(2)} CPU s; ` +
          `last three rounds ${curveWarmup.lastRoundsJitCores.toFixed(3)} of a core (${curveWarmup.quiet ? 'quiet' : 'NOT quiet: max time reached'})`,
      );
      await drainJobs(db, CURVE_WARMUP_JOB_NAME, 'the warm-up', config.rateDrainTimeoutS);
    }
    const single = JSON.stringify(singleGpuJob(CURVE_JOB_NAME, config.rateSimDurationMs));
    curve = await runCurve(
      { baseUrl: s.gatewayUrl, token, body: () => single },
      watch,
      {
        rates: config.curveRates,
        warmupS: config.curveWarmupS,
        measureS: config.curveMeasureS,
        settleS: config.curveSettleS,
        maxSockets: config.openLoopSockets,
      },
      () => {
        const from = cpuSnapshot();
        return () => cpuBetween(from, cpuSnapshot(), servicePids(s));
      },
      say,
      () => teardown.check(),
      () => doorRefusals(s.gatewayUrl),
    );
    await drainJobs(db, CURVE_JOB_NAME, 'the curve', config.rateDrainTimeoutS);
  }

  const loadAvgBeforeRate = loadavg();
  const rate = config.phases.includes('rate') ? await ratePhase(s, db, watch, token) : null;

  /* Phase 2: backlog. */
  let backlog: DispatchResults['backlog'] = null;
  if (config.phases.includes('backlog') && config.backlog > 0) backlog = await backlogPhase(s, db, watch, token, fleet.gpus);

  /* Phase 3: preemption. */
  let preemption: DispatchResults['preemption'] = null;
  if (config.phases.includes('preemption')) {
    preemption = await runPreemptionPhase(
      {
        gatewayUrl: s.gatewayUrl,
        adminToken,
        token,
        db,
        watch,
        say,
        api: (method, path, body) => api(s.gatewayUrl, adminToken, method, path, body),
        until: (what, timeoutMs, probe, intervalMs) => until(what, timeoutMs, probe, intervalMs),
      },
      {
        rate: config.preemptRate,
        durationS: config.preemptS,
        highShare: config.preemptHighShare,
        highRunMs: config.preemptHighRunMs,
        graceMs: config.preemptGraceMs,
        stopMs: config.preemptStopMs,
        settleS: config.preemptSettleS,
        maxSockets: config.openLoopSockets,
        fillConnections: config.backlogConnections,
      },
    );
  }

  const report: DispatchResults = {
    bench: 'dispatch',
    startedAt: new Date(t0).toISOString(),
    config,
    conditions: {
      ...cond,
      pgbench,
      loadAvgBeforeRate: loadAvgBeforeRate.map((x) => Math.round(x * 100) / 100),
      loadAvgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100),
      gantry: {
        services: 'one replica each: api-gateway, scheduler, heartbeat-ingester, reconciler, node-agent',
        GANTRY_SIM_NODES: config.nodes,
        GANTRY_SIM_EXECUTOR: 'sleep',
        GANTRY_HEARTBEAT_MS: config.heartbeatMs,
        GANTRY_NODE_SUSPECT_MS: config.nodeSuspectMs,
        GANTRY_NODE_DEAD_MS: config.nodeDeadMs,
        LOG_LEVEL: config.logLevel,
        beatsPerSecondOffered: Math.round((config.nodes * 1000) / config.heartbeatMs),
        inheritedGantryVariables: inheritedGantryEnv(),
        topicPartitions: TOPIC_PARTITIONS,
      },
      command: 'npm run bench:dispatch',
    },
    fleet,
    idleCpu,
    gang,
    curveWarmup,
    curve,
    rate,
    backlog,
    preemption,
    watch: { runRecords: watch.runRecords },
    logs: relative(root, logDir),
  };
  report.floors = floorVerdicts(report);
  mkdirSync(join(root, '.cache', 'bench'), { recursive: true });
  writeFileSync(outFile, JSON.stringify(report, null, 2));
  printReport(report, relative(root, outFile));
}

/** Phase 1: creates at a fixed rate, open-loop, then their dispatch latency. */
async function ratePhase(s: Stack, db: Client, watch: CommandWatch, token: string): Promise<DispatchResults['rate']> {
  say(
    `phase 1: ${config.rate}/s open-loop for ${config.rateWarmupS} s of warm-up (not counted), then ${config.rateS} s, over up to ${config.openLoopSockets} connections, ` +
      `${config.gangShare * 100}% gangs of ${config.gangSize}, jobs ${config.rateSimDurationMs} ms`,
  );
  const mix = { simDurationMs: config.rateSimDurationMs, gangShare: config.gangShare, gangSize: config.gangSize };
  // One open-loop run: its first rateWarmupS seconds warm the stack (their jobs under another name,
  // not counted), the rest is measured. One run, not two, so no fresh connections open at the start
  // of what is measured.
  const warmup = Math.round(config.rate * config.rateWarmupS);
  const warmBody = rateBodies(mix, RATE_WARMUP_JOB_NAME);
  const nextBody = rateBodies(mix);
  let rateA: CpuSnapshot = cpuSnapshot();
  let shedA: Promise<DoorRefusals> = doorRefusals(s.gatewayUrl);
  const warmTimer = setTimeout(() => {
    rateA = cpuSnapshot();
    shedA = doorRefusals(s.gatewayUrl);
  }, config.rateWarmupS * 1000);
  const whole = await runOpenLoop(
    { baseUrl: s.gatewayUrl, token, body: (i) => (i < warmup ? warmBody() : nextBody()) },
    { rate: config.rate, durationS: config.rateWarmupS + config.rateS, maxSockets: config.openLoopSockets },
  );
  clearTimeout(warmTimer);
  const rateRun = measuredPart(whole, warmup);
  const rateEndMs = Date.now();
  const rateCpu = cpuBetween(rateA, cpuSnapshot(), servicePids(s));
  teardown.check();
  const rateSubmit = summarisePhase(rateRun, config.rateS);
  const [shedBefore, shedAfter] = await Promise.all([shedA, doorRefusals(s.gatewayUrl)]);
  const refusedBy = refusalsBetween(shedBefore, shedAfter);
  say(
    `phase 1: ${rateSubmit.createsPerS.toFixed(1)} submissions/s achieved, p99 ${rateSubmit.latencyMs.p99.toFixed(0)} ms; ` +
      `refused by the door ${refusedBy.door}, by the event-loop shedding ${refusedBy.eventLoop}, otherwise ${rateSubmit.non2xx - refusedBy.door - refusedBy.eventLoop}`,
  );
  const drainA = cpuSnapshot();
  const rateDrain = await drainJobs(db, RATE_JOB_NAME, 'phase 1', config.rateDrainTimeoutS);
  const rateDrainCpu = cpuBetween(drainA, cpuSnapshot(), servicePids(s));
  // Latency from each request's scheduled send, not from when the gateway got round to creating it.
  const dueAt = new Map(rateRun.samples.filter((x) => x.jobId).map((x) => [x.jobId!, x.dueAtMs]));
  const dispatch: DispatchReport = await dispatchLatency(db, watch, RATE_JOB_NAME, rateEndMs, dueAt);
  say(
    `phase 1: dispatch p50 ${dispatch.all.latencyMs?.p50 ?? '-'} ms, p99 ${dispatch.all.latencyMs?.p99 ?? '-'} ms, ` +
      `${dispatch.all.notDispatchedInPhase} not dispatched within the phase`,
  );

  return { submit: rateSubmit, refusedBy, dispatch, cpu: rateCpu, drain: rateDrain, drainCpu: rateDrainCpu, watchDelayMs: delaySummary(watch.receiveDelaysMs) };
}

/** How far behind the bench's own consumer ran (it must not be the bottleneck). */
function delaySummary(v: number[]): { p50: number; p99: number; max: number } | null {
  if (!v.length) return null;
  const s = [...v].sort((a, b) => a - b);
  return { p50: s[Math.floor(s.length / 2)], p99: s[Math.min(s.length - 1, Math.floor(s.length * 0.99))], max: s[s.length - 1] };
}

async function backlogPhase(s: Stack, db: Client, watch: CommandWatch, token: string, fleetGpus: number): Promise<NonNullable<DispatchResults['backlog']>> {
  const scheduler = s.get('scheduler');
  say('phase 2: stopping the scheduler');
  await scheduler.stop();
  const free = Number((await db.query(`SELECT coalesce(sum(gpus_total - gpus_allocated), 0) AS n FROM nodes WHERE NOT cordoned`)).rows[0].n);
  if (free < config.backlog) say(`WARNING: only ${free} free GPUs for ${config.backlog} one-GPU jobs: the drain will stop at capacity`);

  say(`phase 2: submitting ${config.backlog} jobs over ${config.backlogConnections} connections (jobs ${config.backlogSimDurationMs} ms)`);
  const body = JSON.stringify(singleGpuJob(BACKLOG_JOB_NAME, config.backlogSimDurationMs));
  const submitA = cpuSnapshot();
  const submitRun = await runCreatePhase(
    { baseUrl: s.gatewayUrl, token, body },
    { connections: config.backlogConnections, durationS: 3600, amount: config.backlog },
  );
  const submitCpu = cpuBetween(submitA, cpuSnapshot(), servicePids(s));
  teardown.check();
  const submit = summarisePhase(submitRun, submitRun.wallS);
  const queued = Number((await db.query(`SELECT count(*) AS n FROM jobs WHERE name = $1 AND state = 'QUEUED'`, [BACKLOG_JOB_NAME])).rows[0].n);
  // Phase-1 jobs still queued (an overloaded phase 1 whose drain timed out) are placed first (FIFO): count them in.
  const queuedTotal = Number((await db.query(`SELECT count(*) AS n FROM jobs WHERE state = 'QUEUED'`)).rows[0].n);
  say(`phase 2: ${queued} jobs queued in ${submitRun.wallS.toFixed(1)} s (${submit.createsPerS.toFixed(1)}/s); ${queuedTotal} QUEUED in all`);
  // The gateway's lifecycle messages are relayed before the scheduler starts, so the drain measures placement.
  await until('outbox empty before the drain', 120_000, async () => Number((await db.query(`SELECT count(*) AS n FROM outbox`)).rows[0].n) === 0, 500).catch(
    (e) => say(`${(e as Error).message}; going on`),
  );

  const sampler = new DrainSampler(db, () => scheduler.url);
  const drainA = cpuSnapshot();
  const startMs = Date.now();
  // The restarted process's counters start at zero.
  sampler.samples.push({ atMs: startMs, placed: 0, lostRaces: 0, cycles: 0, cycleSecondsSum: 0, queued: queuedTotal });
  say('phase 2: starting the scheduler');
  scheduler.start();
  sampler.start();
  let readyMs: number | null = null;
  let drained = true;
  try {
    await scheduler.ready(120_000);
    readyMs = Date.now();
    await until('backlog drained (no job QUEUED)', config.drainTimeoutS * 1000, async () => (await sampler.queued()) === 0, 250);
  } catch (e) {
    if (teardown.interrupted) throw e;
    drained = false;
    say(`${(e as Error).message}; going on with what was placed`);
  }
  const doneMs = Date.now();
  const drainCpu = cpuBetween(drainA, cpuSnapshot(), servicePids(s));
  sampler.stop();
  const left = await sampler.queued();

  const db1 = seriesOf(await placementTimes(db, startMs));
  // RUN commands follow placements through the outbox relay: give them a moment to arrive.
  await until('RUN seen for every job placed in the drain', 60_000, async () => runTimes(watch, startMs).length >= db1.count, 500).catch((e) =>
    say(`${(e as Error).message}; going on`),
  );
  const runs = seriesOf(runTimes(watch, startMs));
  const metric = metricSeries(sampler.samples);
  const placed = db1.count;
  const overall = db1.lastMs !== null ? placed / ((db1.lastMs - startMs) / 1000) : 0;
  const firstToLast = db1.lastMs !== null && db1.firstMs !== null && db1.lastMs > db1.firstMs ? (placed - 1) / ((db1.lastMs - db1.firstMs) / 1000) : NaN;
  say(`phase 2: ${placed} placed; ${overall.toFixed(0)}/s from scheduler start, median ${db1.medianPerS}/s per second`);
  return {
    submit,
    submitCpu,
    queued,
    queuedTotal,
    freeGpusBefore: free,
    fleetGpus,
    drain: {
      drained,
      leftQueued: left,
      startMs,
      schedulerReadyAfterS: readyMs ? (readyMs - startMs) / 1000 : null,
      allScheduledAfterS: db1.lastMs !== null ? (db1.lastMs - startMs) / 1000 : null,
      waitedS: (doneMs - startMs) / 1000,
      placed,
      overallPerS: overall,
      firstToLastPerS: firstToLast,
      db: db1,
      metric: { ...metric, samples: sampler.samples },
      runs,
    },
    drainCpu,
  };
}

teardown.runMain(main);
