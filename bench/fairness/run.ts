/**
 * `npm run bench:fairness`: a seeded multi-team trace (trace.ts) replayed through the real services
 * on a simulated fleet, time compressed, once per scheduling policy (policies.ts) in the same run:
 * the policy before issue 41 beside the new one, and the new one with a strict reservation (what
 * runtime-aware backfill adds). See bench/fairness/README.md.
 *
 * Per policy, on a fresh broker (BENCH_KAFKA_PORT), database (gantry_bench_fairness, recreated) and
 * Redis db: the five services as processes with the policy's env, one agent simulating BENCH_NODES
 * nodes with the `sleep` executor; queues per team with their weights, a token per owner; the trace
 * submitted on its schedule; at its end, the holdings (attempt_nodes) and waits (jobs) read back
 * from Postgres and the stack stopped. Prints the trace, the policies side by side, each team's
 * share against its entitlement and its waits, and writes .cache/bench/fairness-<time>.json (and
 * every run's holdings and waits to fairness-<time>-timelines.json).
 * A same-run pgbench single-row INSERT baseline (nothing else of the bench running) sits beside it.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Client } from 'pg';
import { LocalKafkaBroker, Stack, fleetStack, portOpen, waitFor } from '@gantry/stack';
import { PgbenchResult, conditions, freshBenchState, runPgbench } from '../api/infra';
import { fmt } from '../api/stats';
import { Teardown } from '../dispatch/teardown';
import { analyse } from './analysis';
import { loadConfig } from './config';
import { PolicyName, policy } from './policies';
import { readTimeline } from './readback';
import { replayTrace } from './replay';
import { PolicyRun, backfillTable, policyTable, teamTable, traceTable } from './report';
import { TraceJob, describeTrace, generateTrace } from './trace';

const config = loadConfig();
const root = join(__dirname, '..', '..', '..');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const outFile = join(root, '.cache', 'bench', `fairness-${stamp}.json`);
const timelinesFile = join(root, '.cache', 'bench', `fairness-${stamp}-timelines.json`);
const logRoot = join(root, '.cache', 'bench', 'logs', `fairness-${stamp}`);
const kafka = new LocalKafkaBroker(root, config.kafkaPort);
const say = (msg: string) => console.error(`[bench:fairness] ${new Date().toISOString().slice(11, 19)} ${msg}`);
const adminToken = `bench-admin-${randomBytes(24).toString('base64url')}`;

let stack: Stack | null = null;
let kafkaUp = false;
const teardown = new Teardown(say, () => {
  for (const s of stack?.services ?? []) s.kill('SIGKILL');
  if (kafkaUp) spawnSync('bash', [join(root, 'scripts/kafka/stop.sh'), '--port', String(config.kafkaPort)], { stdio: 'inherit' });
});
teardown.installHandlers();
teardown.add('the current stack and broker', async () => stopAll());

async function stopAll(): Promise<void> {
  if (stack) await stack.stop();
  stack = null;
  if (kafkaUp) await kafka.stop();
  kafkaUp = false;
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, Math.max(0, ms)));

async function api(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> | null }> {
  const res = await fetch(`${stack!.gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as Record<string, unknown> | null };
}

async function must(token: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await api(token, method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.json)}`);
  return r.json ?? {};
}

/** Queues in one band with the teams' weights; a parent named by a team but not a team itself is created first, bare. */
async function createQueues(newQueues: boolean): Promise<void> {
  const priority = 10;
  if (newQueues) {
    const parents = new Set(config.teams.map((t) => t.newPolicyQueue?.parent).filter((p): p is string => typeof p === 'string'));
    for (const p of parents) if (!config.teams.some((t) => t.name === p)) await must(adminToken, 'POST', '/v1/queues', { name: p, priority });
  }
  for (const t of config.teams) {
    await must(adminToken, 'POST', '/v1/queues', { name: t.name, priority, weight: t.weight, ...(newQueues ? t.newPolicyQueue : {}) });
  }
}

async function mintTokens(): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  for (const t of config.teams) {
    for (let i = 1; i <= t.owners; i++) {
      const owner = `${t.name}-${i}`;
      tokens.set(owner, String((await must(adminToken, 'POST', '/v1/tokens', { owner, role: 'user' })).token));
    }
  }
  return tokens;
}

let pgbench: PgbenchResult | null = null;
let cond: Record<string, unknown> = {};
let trace: TraceJob[] | null = null;
let fleetGpus = 0;
/** Every run's holdings and waits, written beside the report so that it can be analysed again. */
const timelines: Record<string, unknown> = {};

async function runPolicy(name: PolicyName, index: number): Promise<PolicyRun & { fleetGpus: number; t0Ms: number; timing: Record<string, number> }> {
  const p = policy(name, config.halfLifeHours);
  const tStart = Date.now();
  say(`${name}: fresh broker on ${kafka.brokers}, database and Redis; env ${JSON.stringify(p.env)}`);
  // A fresh broker per policy: nothing of the previous run (offsets, commands, reports) carries over.
  if (await portOpen(config.kafkaPort))
    throw new Error(`something already listens on ${kafka.brokers}: BENCH_KAFKA_PORT must be free (the bench starts a fresh broker per policy)`);
  // Ours from here, so that an interrupt while it starts stops it too.
  kafkaUp = true;
  await kafka.startIfAbsent({ fresh: true });
  await freshBenchState(root, kafka, config.databaseUrl, config.redisUrl);
  teardown.check();
  if (index === 0) {
    cond = await conditions(root, config.databaseUrl, config.kafkaPort);
    if (config.pgbenchS > 0) {
      say(`pgbench baseline (${config.pgbenchS} s, one client, nothing else of the bench running)`);
      pgbench = await runPgbench(config.databaseUrl, { durationS: config.pgbenchS, clients: 1, threads: 1 });
      say(`pgbench: ${Math.round(pgbench.tps)} tps`);
    }
  }

  const work = mkdtempSync(join(tmpdir(), 'gantry-bench-fairness-'));
  const s = fleetStack({
    root,
    logDir: join(logRoot, name),
    basePort: config.basePort,
    adminToken,
    kafkaCredentials: kafka.credentials(),
    readyTimeoutMs: 180_000,
    infra: { kafkaBrokers: kafka.brokers, databaseUrl: config.databaseUrl, redisUrl: config.redisUrl },
    env: {
      LOG_LEVEL: config.logLevel,
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
      GANTRY_HEARTBEAT_MS: String(config.heartbeatMs),
      // The gateway's overload doors off: the trace offers a few creates a second, and a door shut by
      // a busy machine would move its arrivals (what is measured is the scheduler, not the door).
      GANTRY_SHED_EVENT_LOOP_DELAY_MS: '0',
      GANTRY_SHED_CREATE_WAIT_MS: '0',
      GANTRY_CREATE_LATENCY_TARGET_MS: '0',
      ...p.env,
    },
    fleet: { nodes: config.nodes, prefix: 'fair', executor: 'sleep', workDir: work },
  });
  stack = s;
  await s.start();
  teardown.check();
  const db = new Client({ connectionString: config.databaseUrl, application_name: 'gantry-bench-fairness' });
  await db.connect();
  try {
    await waitFor(
      `${config.nodes} nodes registered and HEALTHY`,
      async () => {
        teardown.check();
        const r = await api(adminToken, 'GET', '/v1/cluster/summary');
        return Number((r.json?.nodesByHealth as Record<string, number> | undefined)?.HEALTHY ?? 0) >= config.nodes;
      },
      { timeoutMs: 300_000, intervalMs: 1000 },
    );
    const gpus = Number((await db.query(`SELECT coalesce(sum(gpus_total), 0)::int AS n FROM nodes`)).rows[0].n);
    if (trace === null) {
      fleetGpus = gpus;
      trace = generateTrace({ seed: config.seed, durationS: config.traceS, fleetGpus, teams: config.teams });
      console.log(
        `trace: seed ${config.seed}, ${config.traceS} s, ${trace.length} jobs, fleet ${config.nodes} nodes / ${fleetGpus} GPUs, teams ${config.teamsSource}`,
      );
      console.log(traceTable(describeTrace(trace, { durationS: config.traceS, fleetGpus }), config.teams));
      console.log('');
    } else if (gpus !== fleetGpus) throw new Error(`${name}: the fleet has ${gpus} GPUs, the first run's ${fleetGpus}`);
    await createQueues(p.newQueues);
    const tokens = await mintTokens();
    const readyAfterS = (Date.now() - tStart) / 1000;

    say(`${name}: replaying ${trace.length} jobs over ${config.traceS} s`);
    const replay = await replayTrace(trace, {
      gatewayUrl: s.gatewayUrl,
      tokenOf: (o) => tokens.get(o)!,
      runTag: `${stamp}-${name}`,
      maxInFlight: config.maxInFlight,
      check: () => teardown.check(),
    });
    const cutoffMs = replay.t0Ms + config.traceS * 1000;
    await sleep(cutoffMs - Date.now());
    // Ends reported just before the cut-off are applied (released_at) a moment after it.
    await sleep(2000);
    const timeline = await readTimeline(db);
    timelines[name] = { t0Ms: replay.t0Ms, cutoffMs, holdings: timeline.holdings, waits: timeline.waits };
    const weights = new Map(config.teams.map((t) => [t.name, t.weight]));
    const analysis = analyse(timeline, weights, { t0Ms: replay.t0Ms, ...config });
    say(
      `${name}: GPU utilisation while waiting ${(analysis.utilisation.whileWaiting * 100).toFixed(1)} %, Jain mean ${fmt(analysis.jain.meanOverWindows, 3)}; ` +
        `creates late p99 ${replay.lateMs.p99} ms, refused ${replay.refusals}`,
    );
    return {
      policy: name,
      analysis,
      replay,
      states: timeline.states,
      retries: timeline.retries,
      fleetGpus: gpus,
      t0Ms: replay.t0Ms,
      timing: { readyAfterS, totalS: (Date.now() - tStart) / 1000 },
    };
  } finally {
    await db.end();
    say(`${name}: stopping the stack and the broker`);
    await stopAll();
    rmSync(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  say(`config ${JSON.stringify({ ...config, teams: config.teams.map((t) => t.name) })}`);
  const runs: Array<Awaited<ReturnType<typeof runPolicy>>> = [];
  const loadAvgBefore = loadavg();
  for (const [i, name] of config.policies.entries()) runs.push(await runPolicy(name, i));

  console.log(policyTable(runs, { utilisation: config.utilisationFloor, tolerance: config.shareTolerance }));
  console.log('');
  console.log(teamTable(runs, config.teams));
  const withBackfill = runs.find((r) => r.policy === 'new');
  const strict = runs.find((r) => r.policy === 'new-strict');
  if (withBackfill && strict) {
    console.log('');
    console.log(backfillTable(withBackfill, strict, config.teams));
  }
  console.log('');
  console.log(
    `shares: windows of ${config.windowS} s every ${config.stepS} s from ${config.settleS} s (fair share settled: ` +
      `half-life ${config.halfLifeHours} h = ${fmt(config.halfLifeHours * 3600, 0)} s) to the trace's end; a team is backlogged in a window when it had work waiting ${fmt(config.backlogShare * 100, 0)} % of it`,
  );
  for (const r of runs)
    console.log(
      `${r.policy}: jobs at the cut-off ${JSON.stringify(r.states)}, later attempts ${r.retries}, stack ready after ${fmt(r.timing.readyAfterS, 0)} s`,
    );
  console.log(pgbench ? `pgbench single-row INSERT, 1 client, same run: ${fmt(pgbench.tps, 0)} tps` : 'pgbench: not run (BENCH_PGBENCH_S=0)');

  const report = {
    bench: 'fairness',
    startedAt: stamp,
    config,
    conditions: { ...cond, loadAvgBefore, loadAvgAtEnd: loadavg(), command: 'npm run bench:fairness' },
    pgbench: pgbench ? { tps: pgbench.tps, latencyAvgMs: pgbench.latencyAvgMs, command: pgbench.command } : null,
    trace: trace ? { jobs: trace.length, fleetGpus, teams: describeTrace(trace, { durationS: config.traceS, fleetGpus }) } : null,
    runs: runs.map((r) => ({
      ...r,
      analysis: { ...r.analysis, windows: r.analysis.windows.map((w) => ({ ...w, startS: (w.startMs - r.t0Ms) / 1000, endS: (w.endMs - r.t0Ms) / 1000 })) },
    })),
    logs: relative(root, logRoot),
  };
  mkdirSync(join(root, '.cache', 'bench'), { recursive: true });
  writeFileSync(outFile, JSON.stringify(report, null, 2));
  writeFileSync(timelinesFile, JSON.stringify(timelines));
  console.log(`written ${relative(root, outFile)} (the runs' holdings and waits: ${relative(root, timelinesFile)})`);
}

teardown.runMain(main);
