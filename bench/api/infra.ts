import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { LocalKafkaBroker, flushRedisDb, recreateDatabase, withDb } from '@gantry/stack';

/** The only databases a bench recreates (drops) at start. */
export const BENCH_DATABASE = /^gantry_bench_[a-z0-9_]+$/;

/** Every bench starts from nothing: its database recreated and migrated, its Redis db flushed, the topics there. */
export async function freshBenchState(root: string, kafka: LocalKafkaBroker, databaseUrl: string, redisUrl: string): Promise<void> {
  await recreateDatabase(root, databaseUrl, BENCH_DATABASE);
  await flushRedisDb(redisUrl);
  await kafka.createTopics();
}
// The baseline lives in @gantry/stack, where test:chaos takes it too.
export { findPgbench, runPgbench } from '@gantry/stack';
export type { PgbenchResult } from '@gantry/stack';

/* ---- CPU accounting: who used the two cores during a phase ---- */

const CLK_TCK = 100;

export interface CpuSnapshot {
  at: number;
  machineBusy: number;
  machineTotal: number;
  /** CPU seconds per pid. */
  pids: Map<number, { comm: string; cpuS: number }>;
  /** CPU seconds of each JVM's JIT compiler threads, by pid (see JIT_THREAD). */
  jit: Map<number, number>;
}

/** One /proc stat file (a process's or a thread's): its name and its user + system CPU seconds. */
function readStat(path: string): { comm: string; cpuS: number } | null {
  try {
    const stat = readFileSync(path, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const f = stat.slice(close + 2).split(' ');
    // fields after ")" start at field 3 (state); utime is field 14, stime 15.
    return { comm, cpuS: (Number(f[11]) + Number(f[12])) / CLK_TCK };
  } catch {
    return null;
  }
}

/**
 * HotSpot's compiler threads ("C2 CompilerThread0", cut to 15 characters by the kernel). A broker
 * the bench has just started spends most of its first minute's CPU compiling (bench:churn,
 * 2026-12-05: 6.3 of its 10 s), which a long-running broker has behind it: shown apart, so a
 * phase's figure for Kafka says what serving the traffic cost.
 */
const JIT_THREAD = /^C[12] CompilerThre/;

/** CPU seconds of a JVM's JIT compiler threads so far (0 for a process that is not one, or is gone). */
export function jitCpuSeconds(pid: number): number {
  let s = 0;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const t of tasks) {
    const r = readStat(`/proc/${pid}/task/${t}/stat`);
    if (r && JIT_THREAD.test(r.comm)) s += r.cpuS;
  }
  return s;
}

export function cpuSnapshot(): CpuSnapshot {
  const [, ...cols] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const v = cols.map(Number);
  // user nice system idle iowait irq softirq steal
  const idle = v[3] + v[4];
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const pids = new Map<number, { comm: string; cpuS: number }>();
  const jit = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const r = readStat(`/proc/${d}/stat`);
    if (!r) continue;
    pids.set(Number(d), r);
    if (r.comm === 'java') jit.set(Number(d), jitCpuSeconds(Number(d)));
  }
  return { at: Date.now(), machineBusy: (total - idle) / CLK_TCK, machineTotal: total / CLK_TCK, pids, jit };
}

export interface CpuUse {
  wallS: number;
  /** Busy share of the whole machine, 0..1 (all cores). */
  machineBusy: number;
  /** CPU seconds per component, and as a share of the machine's capacity over the phase. */
  components: Record<string, { cpuS: number; shareOfMachine: number }>;
}

/**
 * CPU seconds spent between two snapshots, grouped: the named pids, every `postgres` process
 * (the whole cluster, so other sessions' queries count too), redis-server, and everything else.
 * A named JVM's JIT compiler threads are a group of their own, `<name> JIT`.
 */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot, named: Record<string, number | null | undefined>): CpuUse {
  const wallS = (b.at - a.at) / 1000;
  const capacity = b.machineTotal - a.machineTotal;
  const byPid = new Map<number, string>();
  for (const [name, pid] of Object.entries(named)) if (pid) byPid.set(pid, name);
  const groups: Record<string, number> = {};
  const add = (group: string, s: number) => {
    if (s > 0) groups[group] = (groups[group] ?? 0) + s;
  };
  for (const [pid, end] of b.pids) {
    // A pid seen in both snapshots is the same process (its name may change: exec, process.title).
    const start = a.pids.get(pid)?.cpuS ?? 0;
    const used = end.cpuS - (start <= end.cpuS ? start : 0);
    if (used <= 0) continue;
    const name = byPid.get(pid);
    const group = name ?? (end.comm === 'postgres' ? 'postgres (all)' : end.comm === 'redis-server' ? 'redis' : 'other processes');
    const jitEnd = name !== undefined ? b.jit.get(pid) : undefined;
    if (jitEnd === undefined) {
      add(group, used);
      continue;
    }
    const jitStart = a.jit.get(pid) ?? 0;
    const jit = Math.min(used, Math.max(0, jitEnd - (jitStart <= jitEnd ? jitStart : 0)));
    add(group, used - jit);
    add(`${group} JIT`, jit);
  }
  const components: CpuUse['components'] = {};
  for (const [g, s] of Object.entries(groups).sort((x, y) => y[1] - x[1])) {
    components[g] = { cpuS: round(s, 2), shareOfMachine: round(s / Math.max(capacity, 1e-9), 3) };
  }
  return { wallS: round(wallS, 1), machineBusy: round((b.machineBusy - a.machineBusy) / Math.max(capacity, 1e-9), 3), components };
}

const round = (n: number, d: number) => Math.round(n * 10 ** d) / 10 ** d;

/* ---- Conditions recorded with every run (docs/benchmarks/README.md) ---- */

function sh(cmd: string, args: string[], cwd?: string): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

export async function conditions(root: string, databaseUrl: string, kafkaPort: number): Promise<Record<string, unknown>> {
  const status = sh('git', ['status', '--porcelain'], root);
  const pg = await withDb(databaseUrl, async (c) => {
    const one = async (q: string) => String((await c.query(q)).rows[0]?.v ?? '');
    return {
      version: await one(`SELECT version() AS v`),
      shared_buffers: await one(`SELECT current_setting('shared_buffers') AS v`),
      max_connections: await one(`SELECT current_setting('max_connections') AS v`),
      synchronous_commit: await one(`SELECT current_setting('synchronous_commit') AS v`),
      fsync: await one(`SELECT current_setting('fsync') AS v`),
      otherBackends: await one(
        `SELECT count(*) AS v FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname IS DISTINCT FROM current_database()`,
      ),
    };
  }).catch((e) => ({ error: (e as Error).message }));
  let kafkaSettings: Record<string, string> = {};
  try {
    const props = readFileSync(join(root, '.cache/kafka', `data-${kafkaPort}`, 'server.properties'), 'utf8');
    // Without the JAAS lines: they hold the broker's own password.
    kafkaSettings = Object.fromEntries(
      props
        .split('\n')
        .filter((l) => l && !l.startsWith('#') && l.includes('=') && !l.includes('jaas.config'))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
  } catch {
    /* not ours */
  }
  const kafkaJar = (() => {
    try {
      return readdirSync(join(root, '.cache/kafka/libs')).find((f) => /^kafka_[\d.]+-[\d.]+\.jar$/.test(f)) ?? '';
    } catch {
      return '';
    }
  })();
  return {
    commit: sh('git', ['rev-parse', 'HEAD'], root),
    treeClean: status === '',
    treeChanges: status ? status.split('\n') : [],
    cpu: `${cpus()[0]?.model ?? '?'} x ${cpus().length}`,
    memoryGiB: round(totalmem() / 2 ** 30, 1),
    kernel: release(),
    os: sh('sh', ['-c', '. /etc/os-release && echo "$PRETTY_NAME"']),
    disk: sh('sh', ['-c', 'findmnt -no SOURCE,FSTYPE / ; lsblk -dno NAME,ROTA,SIZE 2>/dev/null | head -5']),
    loadAvgAtStart: loadavg().map((x) => round(x, 2)),
    node: process.version,
    postgres: pg,
    redis: sh('redis-server', ['--version']),
    kafka: { jar: kafkaJar, settings: kafkaSettings },
    sameHost: 'everything (load generator, five services, Kafka, Postgres, Redis) on one host, over loopback',
  };
}
