/**
 * `npm run bench:churn-slurm`: bench:churn's scenario run against Slurm 22.05 on this host, the
 * same-run baseline for bench:churn (docs/benchmarks/README.md, "bench:churn-slurm"). Issue 13's Slurm row
 * was measured once, on one machine of this kind; machines of this kind differ up to 3x, so a
 * Gantry figure is compared with Slurm's on the same host, measured minutes apart.
 *
 * Four nodes of 8 GPUs (slurm-cluster.ts), every job one GPU running one short process; a user
 * submitting with `sbatch` from a shell loop (submit.sh). Phases as in bench:churn:
 *   idle    one job at a time (each once the previous one started, then 0-999 ms at random:
 *           slurmctld allocates on a one-second cycle, see submit.sh): submit -> start p50/p99;
 *   stream  BENCH_JOBS jobs back to back: submit -> start p99, makespan first submit -> last end;
 *   accept  nodes drained: one shell submitting back to back, then four at once (jobs/s);
 *   burst   BENCH_JOBS jobs queued on drained nodes, all four resumed at once: release -> start
 *           p50/p99 and the makespan from the release to the last end.
 * A job's start is what its own process wrote (`date +%s%3N`); its end is taken as that same
 * instant (the process exits right after, so Slurm's makespans are, if anything, a little short).
 * Gantry's figures are the agents' reports of the spawned process and of its exit.
 * A same-run pgbench single-row INSERT baseline sits beside the figures, as in every bench.
 * Writes .cache/bench/churn-slurm-<time>.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { numberFromEnv as num, runCommand, waitFor } from '@gantry/stack';
import { CpuUse, cpuBetween, cpuSnapshot, runPgbench } from '../../api/infra';
import { latencies, table } from '../../api/stats';
import { Teardown } from '../../dispatch/teardown';
import { SlurmCluster } from './slurm-cluster';
import { churnFigures, churnRowOf } from '../churn-row';

const config = {
  jobs: num('BENCH_JOBS', 500),
  idleJobs: num('BENCH_IDLE_JOBS', 50),
  warmupJobs: num('BENCH_WARMUP_JOBS', 200),
  acceptSerial: num('BENCH_ACCEPT_SERIAL', 1000),
  acceptParallel: num('BENCH_ACCEPT_PARALLEL', 2000),
  acceptClients: num('BENCH_ACCEPT_CLIENTS', 4),
  pgbenchS: num('BENCH_PGBENCH_S', 10),
  slurmPort: num('BENCH_SLURM_PORT', 46817),
  phaseTimeoutS: num('BENCH_PHASE_TIMEOUT_S', 300),
  databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gantry_bench_slurm',
};

const root = join(__dirname, '..', '..', '..', '..');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const outFile = join(root, '.cache', 'bench', `churn-slurm-${stamp}.json`);
const logDir = join(root, '.cache', 'bench', 'logs', `churn-slurm-${stamp}`);
const submitScript = join(root, 'bench', 'churn', 'slurm', 'submit.sh');
const say = (msg: string) => console.error(`[bench:churn-slurm] ${new Date().toISOString().slice(11, 19)} ${msg}`);

const teardown = new Teardown(say, () => undefined);
teardown.installHandlers();

interface Sent {
  id: string;
  sentAtMs: number;
}

/** Runs submit.sh: `n` jobs back to back from one shell; what it sent, and when the shell ended. */
async function submit(c: SlurmCluster, n: number, tag: string, mode?: 'wait'): Promise<{ sent: Sent[]; endedAtMs: number }> {
  const log = join(c.dir, `submit-${tag}.log`);
  await runCommand('bash', [submitScript, String(n), c.jobsDir, log, ...(mode ? [mode] : [])], { env: c.slurmEnv });
  const endedAtMs = Date.now();
  const sent = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [t, id] = line.split(' ');
      return { id, sentAtMs: Number(t) * 1000 };
    });
  if (sent.length !== n) throw new Error(`submit.sh ${tag}: ${sent.length} of ${n} jobs submitted`);
  return { sent, endedAtMs };
}

/**
 * Each job's start (ms), from its output file, once every one has written it. One directory
 * listing per look, and only new files read: the bench must not take the CPU Slurm is measured on.
 */
async function startsOf(c: SlurmCluster, ids: string[]): Promise<Map<string, number>> {
  const wanted = new Set(ids.map((id) => `${id}.out`));
  const starts = new Map<string, number>();
  await waitFor(
    `${ids.length} Slurm jobs started`,
    () => {
      teardown.check();
      for (const name of readdirSync(c.jobsDir)) {
        if (!wanted.has(name)) continue;
        const text = readFileSync(join(c.jobsDir, name), 'utf8').trim();
        // Created empty by slurmstepd; the job's own process writes its start.
        if (!/^\d{13}$/.test(text)) continue;
        starts.set(name.slice(0, -'.out'.length), Number(text));
        wanted.delete(name);
      }
      return wanted.size === 0;
    },
    { timeoutMs: config.phaseTimeoutS * 1000, intervalMs: 50 },
  );
  return starts;
}

const cpu: Record<string, CpuUse> = {};
async function phase<T>(name: string, c: SlurmCluster, fn: () => Promise<T>): Promise<T> {
  const a = cpuSnapshot();
  const out = await fn();
  cpu[name] = cpuBetween(a, cpuSnapshot(), { ...c.pids(), bench: process.pid });
  return out;
}

async function main(): Promise<void> {
  say(`config ${JSON.stringify(config)}`);
  const installed = spawnSync('bash', [join(root, 'scripts', 'slurm', 'install.sh')], { stdio: 'inherit' });
  if (installed.status !== 0) throw new Error('Slurm is not installed (scripts/slurm/install.sh)');
  const c = new SlurmCluster({ port: config.slurmPort, logDir, say });
  teardown.add('slurm', () => c.stop());
  await c.start();
  say(`slurm: four nodes idle (${c.dir})`);

  say(`warm-up: ${config.warmupJobs} jobs`);
  const warm = await submit(c, config.warmupJobs, 'warmup');
  await startsOf(
    c,
    warm.sent.map((s) => s.id),
  );

  await runCommand(process.execPath, [join(root, 'dist', 'tools', 'infra', 'ensure-databases.js'), config.databaseUrl], { cwd: root });
  say(`pgbench baseline (${config.pgbenchS} s, cluster idle)`);
  const pgbench = await runPgbench(config.databaseUrl, { durationS: config.pgbenchS, clients: 1, threads: 1 });
  const loadBefore = loadavg();

  say('idle: one job at a time');
  const idle = await phase('idle', c, async () => {
    const { sent } = await submit(c, config.idleJobs, 'idle', 'wait');
    const starts = await startsOf(
      c,
      sent.map((s) => s.id),
    );
    return { submitToStartMs: latencies(sent.map((s) => starts.get(s.id)! - s.sentAtMs)) };
  });
  say(`idle: submit -> start p50 ${idle.submitToStartMs.p50} ms, p99 ${idle.submitToStartMs.p99} ms`);

  say(`stream: ${config.jobs} jobs back to back`);
  const stream = await phase('stream', c, async () => {
    const { sent } = await submit(c, config.jobs, 'stream');
    const starts = await startsOf(
      c,
      sent.map((s) => s.id),
    );
    const last = Math.max(...starts.values());
    return {
      submitToStartMs: latencies(sent.map((s) => starts.get(s.id)! - s.sentAtMs)),
      submitSeconds: (sent[sent.length - 1].sentAtMs - sent[0].sentAtMs) / 1000,
      makespanS: (last - sent[0].sentAtMs) / 1000,
    };
  });
  say(`stream: makespan ${stream.makespanS.toFixed(2)} s, submit -> start p99 ${stream.submitToStartMs.p99} ms`);

  c.setDrained(true);
  say('accept: nodes drained');
  const accept = await phase('accept', c, async () => {
    const serial = await submit(c, config.acceptSerial, 'accept-serial');
    const serialS = (serial.endedAtMs - serial.sent[0].sentAtMs) / 1000;
    const per = Math.floor(config.acceptParallel / config.acceptClients);
    const clients = await Promise.all(Array.from({ length: config.acceptClients }, (_, i) => submit(c, per, `accept-parallel-${i}`)));
    const firstSent = Math.min(...clients.map((r) => r.sent[0].sentAtMs));
    const parallelS = (Math.max(...clients.map((r) => r.endedAtMs)) - firstSent) / 1000;
    return {
      serial: { jobs: config.acceptSerial, seconds: serialS, perS: config.acceptSerial / serialS },
      parallel: { jobs: per * config.acceptClients, seconds: parallelS, perS: (per * config.acceptClients) / parallelS },
    };
  });
  say(`accept: ${accept.serial.perS.toFixed(0)}/s one client, ${accept.parallel.perS.toFixed(0)}/s ${config.acceptClients} clients`);
  await c.cancelAll();

  say(`burst: ${config.jobs} jobs queued, then released`);
  const { sent: queued } = await submit(c, config.jobs, 'burst');
  const burst = await phase('burst', c, async () => {
    const releasedAtMs = Date.now();
    c.setDrained(false);
    const starts = await startsOf(
      c,
      queued.map((s) => s.id),
    );
    return {
      releaseToStartMs: latencies(queued.map((s) => starts.get(s.id)! - releasedAtMs)),
      makespanS: (Math.max(...starts.values()) - releasedAtMs) / 1000,
    };
  });
  say(`burst: makespan ${burst.makespanS.toFixed(2)} s, release -> start p99 ${burst.releaseToStartMs.p99} ms`);

  const version = c.run('sinfo', ['--version']).trim();
  const report = {
    bench: 'churn-slurm',
    startedAt: stamp,
    config,
    slurm: version,
    conditions: { loadAvgBefore: loadBefore, loadAvgAtEnd: loadavg(), command: 'npm run bench:churn-slurm' },
    pgbench: { tps: pgbench.tps, latencyAvgMs: pgbench.latencyAvgMs, command: pgbench.command },
    idle,
    stream,
    accept,
    burst,
    cpu,
    logs: relative(root, logDir),
  };
  mkdirSync(join(root, '.cache', 'bench'), { recursive: true });
  writeFileSync(outFile, JSON.stringify(report, null, 2));
  const row = churnRowOf(report);
  console.log(table([['figure', `${version}, this host`], ...churnFigures(config).map((fig) => [fig.label, fig.format(row[fig.key])])]));
  for (const [name, use] of Object.entries(cpu)) {
    console.log(
      `cpu ${name} (${use.wallS} s, machine ${(use.machineBusy * 100).toFixed(0)}% busy): ` +
        Object.entries(use.components)
          .slice(0, 8)
          .map(([k, v]) => `${k} ${v.cpuS}`)
          .join(', '),
    );
  }
  console.log(`pgbench single-row INSERT, 1 client, same run: ${pgbench.tps.toFixed(0)} tps; written ${relative(root, outFile)}`);
}

teardown.runMain(main);
