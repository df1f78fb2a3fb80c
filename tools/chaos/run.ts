/**
 * `npm run test:chaos`: under steady load, crash and restart every part of a whole local stack in
 * turn, measure how long each fault takes to heal, then check from the database (and the agents'
 * reports) that no accepted job was lost, none ran twice and no node's accounting drifted.
 * Runs outside `npm test` (about ten minutes). See docs/benchmarks/README.md, "test:chaos".
 *
 * What it brings up, all on this host, on resources no test or bench uses (every port moved by
 * CHAOS_PORT_OFFSET, else GANTRY_TEST_PORT_OFFSET):
 *   - its own Kafka broker on CHAOS_KAFKA_PORT (59092, data in .cache/kafka/data-59092), stopped at
 *     the end if this run started it;
 *   - its own Postgres cluster (initdb into a temp dir, pg_ctl on 55432) with the gantry_chaos
 *     database, when initdb and pg_ctl are installed (else CHAOS_DATABASE_URL or the machine's, and
 *     no Postgres restart), and its own redis-server on 56379 (db 13), both removed at the end;
 *   - the services as processes from 18800 (CHAOS_GATEWAYS=2 gateways, CHAOS_SCHEDULERS=2
 *     schedulers, one ingester, one reconciler), the agent simulating CHAOS_SIM_NODES nodes with
 *     the `sleep` executor.
 *
 * The run:
 *   1. bring the stack up, wait for the fleet to register, start the load (CHAOS_RATE jobs/s through
 *      the gateway with GantryClient, each create with its own Idempotency-Key; some GPU jobs, some gangs);
 *   2. for each fault: wait for steady state, inject it, measure the recovery (every /readyz green and
 *      a job submitted after that RUNNING), then keep the load on for CHAOS_SETTLE_S before the next;
 *   3. stop the load, wait for every job to finish, check the invariants, print a table and write
 *      everything to .cache/chaos/chaos-<timestamp>.json. Exits 1 if an invariant fails or a fault
 *      did not recover.
 *
 * The pause after each recovery is deliberately fixed, not a readiness stand-in: it is load time, so
 * every fault hits a loaded system, and the delayed effects of the previous one (an attempt missing
 * from its node's beats is only declared lost after GANTRY_PHANTOM_GRACE_MS, 15 s) land in that
 * fault's window rather than the next one's.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { GantryClient } from '@gantry/client';
import {
  LocalKafkaBroker,
  PgbenchResult,
  Stack,
  fleetStack,
  flushRedisDb,
  kafkaSecurityFor,
  killRunningCommands,
  recreateDatabase,
  runPgbench,
  waitFor,
  withDb,
} from '@gantry/stack';
import { CHAOS_DATABASE, POSTGRES_BIN, loadChaosConfig } from './chaos-config';
import { consumerGroupMembers } from './consumer-groups';
import { LostAttempt, auditExecutions } from './execution-audit';
import { Fault, GRACEFUL_STOP_MS, InjectionDetail, allFaults } from './faults';
import { Overload } from './overload';
import { OwnPostgres } from './own-postgres';
import { OwnRedis } from './own-redis';
import { FaultWindow, faultWindow } from './fault-window';
import { InvariantResult, checkInvariants } from './invariants';
import { LoadGenerator } from './load-generator';
import { HostileTenant, TENANT_OWNER } from './hostile-tenant';
import { Recovery, measureRecovery, waitSteady } from './recovery-probe';
import { seconds, textTable } from './text-table';

const config = loadChaosConfig(OwnPostgres.available(POSTGRES_BIN));
const root = join(__dirname, '..', '..', '..');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const outDir = join(root, '.cache', 'chaos');
const outFile = join(outDir, `chaos-${stamp}.json`);
const logDir = join(outDir, 'logs', stamp);
const say = (msg: string) => console.error(`[test:chaos ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const OWNER = 'chaos';

/* ---- Everything started is stopped, in reverse, on success, failure or Ctrl-C ---- */

const cleanups: { what: string; fn: () => Promise<void> }[] = [];
let cleaning: Promise<void> | null = null;
let stack: Stack | null = null;
let load: LoadGenerator | null = null;
let tenant: HostileTenant | null = null;
const broker = new LocalKafkaBroker(root, config.kafkaPort);
const redis = new OwnRedis(config.redisPort, logDir);
const postgres = config.ownPostgres ? new OwnPostgres(POSTGRES_BIN, config.postgresPort) : null;
let brokerStartedHere = false;
/** The host's same-run baseline (benchmarks quote their figures beside it; so does this run). */
let pgbench: PgbenchResult | null = null;
let interrupted = false;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    supervising = false;
    killRunningCommands();
    await load?.stop().catch(() => undefined);
    tenant?.stop();
    while (cleanups.length) {
      const { what, fn } = cleanups.pop()!;
      say(`stopping ${what}`);
      await fn().catch((e) => say(`could not stop ${what}: ${(e as Error).message}`));
    }
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (interrupted) {
      say(`${signal} again: killing the services`);
      for (const s of stack?.services ?? []) s.kill('SIGKILL');
      if (brokerStartedHere) spawnSync('bash', [join(root, 'scripts/kafka/stop.sh'), '--data-dir', broker.dataDir], { stdio: 'inherit' });
      process.exit(130);
    }
    interrupted = true;
    say(`${signal}: stopping everything (again to force)`);
    void cleanup().finally(() => process.exit(130));
  });
}

/* ---- A supervisor: a service that exits on its own is a finding, and is restarted as systemd would ---- */

let supervising = false;
const crashes: { service: string; at: number; logTail: string }[] = [];

function supervise(): void {
  if (!supervising || !stack) return;
  for (const s of [...stack.services, ...(tenant ? [tenant.agent] : [])]) {
    if (s.running) continue;
    crashes.push({ service: s.opts.name, at: Date.now(), logTail: s.logTail(20) });
    say(`${s.opts.name} exited on its own: restarting it (log ${relative(root, s.logFile)})`);
    s.start();
  }
}

/* ---- The stack ---- */

async function prepare(): Promise<{ gatewayUrl: string; adminToken: string }> {
  mkdirSync(logDir, { recursive: true });
  if (postgres) {
    say(`own Postgres on ${config.postgresPort} (initdb)`);
    cleanups.push({ what: `Postgres on ${config.postgresPort}`, fn: () => postgres.destroy() });
    await postgres.init();
  }
  say(`own redis-server on ${config.redisPort}`);
  cleanups.push({ what: `redis-server on ${config.redisPort}`, fn: () => redis.stop() });
  await redis.start();
  say(`Kafka on ${broker.brokers}`);
  brokerStartedHere = await broker.startIfAbsent({ fresh: true });
  if (brokerStartedHere) cleanups.push({ what: `Kafka on ${broker.brokers}`, fn: () => broker.stop() });
  else say(`a broker already listens on ${broker.brokers}: using it and leaving it running`);

  say(`database ${new URL(config.databaseUrl).pathname.slice(1)} (recreated), Redis ${config.redisUrl} (flushed), topics`);
  await recreateDatabase(root, config.databaseUrl, CHAOS_DATABASE);
  await flushRedisDb(config.redisUrl);
  await broker.createTopics();
  if (config.pgbenchS > 0) {
    say(`pgbench baseline (${config.pgbenchS} s, one client, before the services start)`);
    pgbench = await runPgbench(config.databaseUrl, { durationS: config.pgbenchS, clients: 1, threads: 1 });
    say(`pgbench: ${Math.round(pgbench.tps)} tps`);
  }

  const adminToken = `chaos-admin-${randomBytes(24).toString('base64url')}`;
  const agentWork = mkdtempSync(join(tmpdir(), 'gantry-chaos-agent-'));
  cleanups.push({ what: 'agent work dir', fn: async () => rmSync(agentWork, { recursive: true, force: true }) });
  stack = fleetStack({
    root,
    logDir,
    basePort: config.basePort,
    infra: { kafkaBrokers: broker.brokers, databaseUrl: config.databaseUrl, redisUrl: config.redisUrl },
    adminToken,
    env: { LOG_LEVEL: config.logLevel, KAFKAJS_NO_PARTITIONER_WARNING: '1' },
    fleet: { nodes: config.simNodes, prefix: 'chaos', executor: 'sleep', workDir: agentWork },
    readyTimeoutMs: 120_000,
    kafkaCredentials: broker.credentials(),
    replicas: { 'api-gateway': config.gateways, scheduler: config.schedulers },
  });
  const s = stack;
  cleanups.push({ what: 'services', fn: () => s.stop() });
  say(`services on ${config.basePort}..${config.basePort + s.services.length - 1} (logs ${relative(root, logDir)})`);
  await s.start();
  if (config.hostileIntervalMs > 0) {
    tenant = new HostileTenant({
      stack: s,
      root,
      workDir: join(agentWork, 'tenant'),
      intervalMs: config.hostileIntervalMs,
      adminToken,
      gatewayUrl: s.gatewayUrl,
    });
    const agent = tenant.agent;
    cleanups.push({ what: "the hostile tenant's agent", fn: () => agent.stop() });
  }
  say(`waiting for ${config.simNodes} simulated nodes to register`);
  await waitFor(`${config.simNodes} nodes registered`, () => count(`SELECT count(*)::int AS n FROM nodes`).then((n) => n >= config.simNodes), {
    timeoutMs: 120_000,
    intervalMs: 500,
  });
  return { gatewayUrl: s.gatewayUrl, adminToken };
}

const count = (sql: string): Promise<number> => withDb(config.databaseUrl, async (c) => Number((await c.query(sql)).rows[0].n));

/** Waits until every job has finished and the outbox is empty. */
async function drain(): Promise<{ drained: boolean; seconds: number; open: number; outbox: number }> {
  const t0 = Date.now();
  let open = 0;
  let outbox = 0;
  let drained = true;
  try {
    await waitFor(
      'every job finished and the outbox empty',
      async () => {
        open = await count(`SELECT count(*)::int AS n FROM jobs WHERE state IN ('QUEUED', 'SCHEDULED', 'RUNNING')`);
        outbox = await count(`SELECT count(*)::int AS n FROM outbox`);
        return open === 0 && outbox === 0;
      },
      { timeoutMs: config.drainTimeoutS * 1000, intervalMs: 1000 },
    );
  } catch {
    drained = false;
  }
  return { drained, seconds: Math.round((Date.now() - t0) / 100) / 10, open, outbox };
}

function conditions(): Record<string, unknown> {
  const sh = (cmd: string, args: string[]) => {
    try {
      return execFileSync(cmd, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  const status = sh('git', ['status', '--porcelain']);
  return {
    commit: sh('git', ['rev-parse', '--short', 'HEAD']),
    treeClean: status === '',
    treeChanges: status ? status.split('\n') : [],
    cpu: `${cpus()[0]?.model ?? '?'} x ${cpus().length}`,
    loadAvgAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
    node: process.version,
    postgres: postgres ? `own cluster on ${config.postgresPort} (${POSTGRES_BIN})` : `shared: ${config.databaseUrl}`,
    redis: `own redis-server on ${config.redisPort}`,
    note: 'one host shared with other agents: load generator, the services, Kafka, Postgres, Redis over loopback',
  };
}

/* ---- Main ---- */

interface FaultResult {
  fault: string;
  target: string;
  kind: Fault['kind'];
  steadyBefore: boolean;
  t0: string;
  injection: InjectionDetail;
  recovery: Recovery;
  recovered: boolean;
  window: FaultWindow;
  crashes: typeof crashes;
  /** Members per consumer group, read when the fault had not healed by the deadline. */
  groupsWhenStalled: Record<string, number> | { error: string } | null;
  /** What the run did when the fault did not heal by itself (null: it did). */
  intervention: Intervention | null;
  /** The machine's 1-minute load average when the fault was injected. */
  loadAvg1: number;
  /** The end of the fault's window (the settle after its recovery). */
  windowEnd: string;
}

interface Intervention {
  action: string;
  /** From the fault to a job submitted after the intervention running; null: not even then. */
  recoveredAfterMs: number | null;
}

/**
 * A fault that did not heal is a finding, recorded as such; to measure the faults after it from a
 * working system, the run then does what an operator would: restart the control plane, gracefully.
 */
async function intervene(s: Stack, t0: number): Promise<Intervention> {
  const names = ['api-gateway', 'scheduler', 'heartbeat-ingester', 'reconciler'] as const;
  say(`intervention: SIGTERM-restarting ${names.join(', ')}`);
  supervising = false;
  for (const n of names) {
    for (const p of s.all(n)) {
      await p.stop(GRACEFUL_STOP_MS);
      p.start();
    }
  }
  supervising = true;
  const r = await measureRecovery(Date.now(), s.services, config.databaseUrl, config.recoveryTimeoutS * 1000);
  const recoveredAfterMs = r.runningAt === null ? null : r.runningAt - t0;
  say(`intervention: ${recoveredAfterMs === null ? 'still NOT recovered' : `recovered ${seconds(recoveredAfterMs)} s after the fault`}`);
  return { action: `SIGTERM restart of ${names.join(', ')}`, recoveredAfterMs };
}

async function main(): Promise<number> {
  say(`config ${JSON.stringify(config)}`);
  const cond = conditions();
  const { gatewayUrl, adminToken } = await prepare();
  const s = stack!;
  const { token } = await new GantryClient({ baseUrl: gatewayUrl, token: adminToken }).createToken(OWNER, 'user');

  const gatewayUrls = s.all('api-gateway').map((g) => g.url);
  load = new LoadGenerator({
    gatewayUrls,
    token,
    ratePerS: config.ratePerS,
    maxInFlight: config.maxInFlight,
    jobMinMs: config.jobMinMs,
    jobMaxMs: config.jobMaxMs,
    maxRetries: config.maxRetries,
  });
  const overload = new Overload({
    gatewayUrls,
    token,
    rate: config.sustainableRate * config.overloadFactor,
    durationS: config.overloadS,
    keyPrefix: `chaos-overload-${stamp}`,
    maxRetries: config.maxRetries,
  });
  const loadSamples: Array<{ at: number; load1: number }> = [];
  const sampler = setInterval(() => loadSamples.push({ at: Date.now(), load1: loadavg()[0] }), 5_000);
  cleanups.push({ what: 'load-average sampler', fn: async () => clearInterval(sampler) });
  const runStart = Date.now();
  load.start();
  if (tenant) {
    say(`hostile tenant: a job every ${config.hostileIntervalMs} ms on ${tenant.nodeId} (a real agent, sandboxed)`);
    await tenant.start();
  }
  supervising = true;
  const supervisor = setInterval(supervise, 500);
  cleanups.push({ what: 'supervisor', fn: async () => clearInterval(supervisor) });
  say(`load: ${config.ratePerS} jobs/s; warm-up ${config.warmupS} s`);
  await pause(config.warmupS * 1000);

  const faults = allFaults({
    services: (n) => s.get(n),
    all: (n) => s.all(n),
    broker,
    redis,
    postgres,
    overload,
    redisUrl: config.redisUrl,
    gatewayUrl,
    adminToken,
    databaseUrl: config.databaseUrl,
  }).filter((f) => config.only.length === 0 || config.only.includes(f.name));
  const results: FaultResult[] = [];
  const agentStops: number[] = [];
  for (const fault of faults) {
    if (interrupted) throw new Error('interrupted');
    const steadyBefore = await waitSteady(s.services, config.databaseUrl, 60_000);
    if (!steadyBefore) say(`not steady before ${fault.name} after 60 s: injecting anyway`);
    const crashesBefore = crashes.length;
    say(`${fault.name}: ${fault.kind} ${fault.target}`);
    supervising = false; // the fault's own stop must not be taken for a crash
    const t0 = Date.now();
    const loadAvg1 = Math.round(loadavg()[0] * 100) / 100;
    if (fault.target === 'node-agent') agentStops.push(t0);
    const injection = await fault.inject();
    supervising = true;
    const recovery = await measureRecovery(t0, s.services, config.databaseUrl, config.recoveryTimeoutS * 1000);
    const recovered = recovery.recoveryMs !== null;
    say(
      `${fault.name}: ${recovered ? `recovered in ${seconds(recovery.recoveryMs)} s (ready after ${seconds(recovery.readyAt! - t0)} s)` : `NOT recovered within ${config.recoveryTimeoutS} s${recovery.notReady.length ? ` (not ready: ${recovery.notReady.join(', ')})` : ''}`}`,
    );
    const groups = recovered
      ? null
      : await consumerGroupMembers(broker.brokers, kafkaSecurityFor(broker.credentials())).catch((e) => ({ error: (e as Error).message }));
    if (groups) say(`${fault.name}: consumer group members ${JSON.stringify(groups)}`);
    const intervention = recovered ? null : await intervene(s, t0);
    await pause(config.settleS * 1000);
    const windowEnd = Date.now();
    const window = await faultWindow(load, config.databaseUrl, t0, recovery.runningAt ?? windowEnd, windowEnd);
    results.push({
      fault: fault.name,
      target: fault.target,
      kind: fault.kind,
      steadyBefore,
      t0: new Date(t0).toISOString(),
      injection,
      recovery,
      recovered,
      window,
      crashes: crashes.slice(crashesBefore),
      groupsWhenStalled: groups,
      intervention,
      loadAvg1,
      windowEnd: new Date(windowEnd).toISOString(),
    });
  }

  say('stopping the load; waiting for the stack to drain');
  tenant?.stop();
  await load.stop();
  const loadEnd = Date.now();
  const drained = await drain();
  say(`drain: ${drained.drained ? 'done' : 'NOT done'} in ${drained.seconds} s (${drained.open} open jobs, ${drained.outbox} outbox rows)`);
  supervising = false;

  say('checking invariants');
  const invariants: InvariantResult[] = await checkInvariants(config.databaseUrl, load.records, OWNER, overload.records, [TENANT_OWNER]);
  if (tenant) invariants.push(...(await tenant.check(secretsOf(s, adminToken), crashes)));
  const audit = await auditExecutions(broker.brokers, kafkaSecurityFor(broker.credentials()), config.databaseUrl, agentStops);
  invariants.push(...faultInvariants(results, audit.lostAttempts, agentStops));
  invariants.push(...audit.results);

  const records = load.records;
  const totals = {
    submitted: records.length,
    accepted: records.filter((r) => r.outcome === 'accepted').length,
    replayed: records.filter((r) => r.outcome === 'replayed').length,
    failed: records.filter((r) => r.outcome === 'failed').length,
    rejected: records.filter((r) => r.outcome === 'rejected').length,
    skippedTicks: load.skipped,
    clientRetries: load.budget.retriedAt.length,
    retriesRefused: load.budget.refusedAt.length,
    loadSeconds: Math.round((loadEnd - runStart) / 1000),
  };
  const ok = invariants.every((i) => i.ok) && results.every((r) => r.recovered) && drained.drained;
  const l1 = loadSamples.map((x) => x.load1);
  const loadAverage = {
    samples: l1.length,
    min: round2(Math.min(...l1)),
    mean: round2(l1.reduce((a, b) => a + b, 0) / Math.max(1, l1.length)),
    max: round2(Math.max(...l1)),
  };
  const report = {
    config,
    conditions: { ...cond, pgbench: pgbench && { tps: pgbench.tps, command: pgbench.command, script: pgbench.script } },
    totals,
    loadAverage,
    faults: results,
    drained,
    invariants,
    executions: audit.summary,
    finishedThenLost: audit.finishedThenLost,
    lostAttempts: audit.lostAttempts,
    crashes,
    ok,
    logs: relative(root, logDir),
  };
  mkdirSync(outDir, { recursive: true });
  writeFileSync(outFile, JSON.stringify({ ...report, submits: records, overloadCreates: overload.records, loadSamples }, null, 2));

  console.log(
    `\ntest:chaos  ${cond.commit}${cond.treeClean ? '' : ' (dirty tree)'}  ${cond.cpu}  pgbench (one client) ${pgbench ? `${Math.round(pgbench.tps)} tps` : 'not run'}  ${config.simNodes} sim nodes, ${config.ratePerS} jobs/s\n`,
  );
  console.log(
    textTable([
      ['fault', 'ready s', 'flowing s', 'recovered s', 'failed creates', 'retries', 'replays', 'max wait s', 'notable job events (to next fault)'],
      ...results.map((r) => [
        r.fault,
        seconds(r.recovery.readyAt === null ? null : r.recovery.readyAt - Date.parse(r.t0)),
        seconds(r.recovery.flowingAt === null ? null : r.recovery.flowingAt - Date.parse(r.t0)),
        r.recovered
          ? seconds(r.recovery.recoveryMs)
          : `NO${r.intervention ? ` (${seconds(r.intervention.recoveredAfterMs)} after restarting the control plane)` : ''}`,
        String(r.window.clientFailures + r.window.clientRejected),
        String(r.window.clientRetries),
        String(r.window.replayed),
        seconds(r.window.maxWaitToRunningMs),
        Object.entries(r.window.events)
          .map(([k, v]) => `${v} ${k}`)
          .join('; ') || '-',
      ]),
    ]),
  );
  console.log(`\nload: ${JSON.stringify(totals)}`);
  console.log(`machine load average (1 min, every 5 s): ${JSON.stringify(loadAverage)}`);
  for (const r of results.filter((x) => x.injection.overload || x.injection.replicas))
    console.log(`${r.fault}: ${JSON.stringify(r.injection.overload ?? r.injection.replicas)}`);
  console.log(`drain: ${drained.drained ? 'done' : 'NOT done'} in ${drained.seconds} s; executions: ${JSON.stringify(audit.summary)}`);
  if (crashes.length) console.log(`services that exited on their own: ${crashes.map((c) => `${c.service} at ${new Date(c.at).toISOString()}`).join(', ')}`);
  console.log('');
  console.log(textTable([['invariant', 'result', 'detail'], ...invariants.map((i) => [i.name, i.ok ? 'ok' : `FAILED (${i.violations})`, i.detail])]));
  for (const i of invariants.filter((x) => !x.ok)) console.log(`\n${i.name}:\n  ${i.examples.join('\n  ')}`);
  console.log(`\n${ok ? 'PASS' : 'FAIL'}; raw results: ${relative(root, outFile)}`);
  return ok ? 0 : 1;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What no job may ever read: the admin token, the control plane's secrets, every Kafka password. */
function secretsOf(s: Stack, adminToken: string): string[] {
  const kafka = broker.credentials();
  const passwords = kafka ? Object.values(kafka.users).map((u) => u.password) : [];
  return [adminToken, s.secrets.nodeCredentialSecret, s.secrets.cursorSecret, s.secrets.commandSigningKey.split('\n')[1], ...passwords].filter(
    (x) => typeof x === 'string' && x.length >= 8,
  );
}
const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * What some faults promise beyond the invariants every job keeps (issue 19): a broker restart loses
 * no attempt (no PHANTOM or NODE_LOST in its window: the agents kept running their work), and a
 * rolling restart of the gateways fails no create (the others take the load).
 */
function faultInvariants(results: FaultResult[], lostAttempts: LostAttempt[], agentStops: number[]): InvariantResult[] {
  const out: InvariantResult[] = [];
  const mk = (name: string, bad: string[], detail: string): InvariantResult => ({
    name,
    ok: bad.length === 0,
    violations: bad.length,
    detail,
    examples: bad.slice(0, 10),
  });
  const kafka = results.find((r) => r.fault === 'restart-kafka');
  if (kafka) {
    // An attempt whose agent was stopped or killed while it ran (an earlier fault; its losses can
    // land after that fault's window) really stopped: only work that kept running counts here.
    const t0 = Date.parse(kafka.t0);
    const end = Date.parse(kafka.windowEnd);
    const stoppedByAgent = (l: LostAttempt) =>
      l.ranks.length > 0 && l.ranks.every((r) => !r.endKnown && agentStops.some((s) => s >= r.startMs && s <= Date.parse(l.lostAt)));
    const inWindow = lostAttempts.filter((l) => Date.parse(l.lostAt) >= t0 && Date.parse(l.lostAt) <= end);
    const bad = inWindow
      .filter((l) => !stoppedByAgent(l))
      .map(
        (l) =>
          `${l.jobId} attempt ${l.attempt} ${l.reason} at ${l.lostAt}: ${l.ranks.map((r) => `${r.nodeId} from ${r.startedAt}, ${r.end}`).join('; ') || 'no execution reported'}`,
      );
    out.push(
      mk(
        'broker restart lost no attempt',
        bad,
        `${kafka.target}: ${inWindow.length} attempts lost from the restart to the next fault, ${inWindow.length - bad.length} of them stopped by an earlier agent kill or restart (no final report)`,
      ),
    );
  }
  const rolling = results.find((r) => r.fault === 'rolling-restart-gateways');
  if (rolling) {
    const failed = rolling.window.clientFailures + rolling.window.clientRejected;
    out.push(
      mk(
        'rolling gateway restart failed no create',
        failed ? [`${failed} creates failed between the first SIGTERM and recovery`] : [],
        `${rolling.target}: ${rolling.window.clientRetries} client retries, creates that got no answer from one gateway went to the other`,
      ),
    );
  }
  return out;
}

main()
  .then(async (code) => {
    await cleanup();
    process.exit(code);
  })
  .catch(async (e) => {
    say(interrupted ? 'interrupted' : `failed: ${(e as Error).stack ?? e}`);
    await cleanup();
    process.exit(interrupted ? 130 : 1);
  });
