import { readFileSync } from 'node:fs';
import { fmt } from '../api/stats';

/** The figures of bench:churn's scenario, Gantry's (bench:churn) or Slurm's (bench:churn-slurm). */
export interface ChurnRow {
  acceptSerialPerS: number;
  acceptParallelPerS: number;
  idleP50Ms: number;
  idleP99Ms: number;
  streamP99Ms: number;
  streamMakespanS: number;
  burstP50Ms: number;
  burstP99Ms: number;
  burstMakespanS: number;
}

/** Slurm 22.05 (batch_sched_delay=0, no defer) as issue 13 measured it, once, on one machine of this kind. */
export const ISSUE_SLURM_ROW: ChurnRow = {
  acceptSerialPerS: 280,
  acceptParallelPerS: 590,
  idleP50Ms: 400,
  idleP99Ms: 990,
  streamP99Ms: 6100,
  streamMakespanS: 10.4,
  burstP50Ms: 5300,
  burstP99Ms: 9200,
  burstMakespanS: 9.3,
};

interface Latencies {
  p50: number;
  p99: number;
}

/** What both benches' reports hold that the row is made of. */
export interface ChurnReport {
  startedAt: string;
  accept: { serial: { perS: number }; parallel: { perS: number } };
  idle: { submitToStartMs: Latencies };
  stream: { submitToStartMs: Latencies; makespanS: number };
  burst: { releaseToStartMs: Latencies; makespanS: number };
}

export function churnRowOf(r: ChurnReport): ChurnRow {
  return {
    acceptSerialPerS: r.accept.serial.perS,
    acceptParallelPerS: r.accept.parallel.perS,
    idleP50Ms: r.idle.submitToStartMs.p50,
    idleP99Ms: r.idle.submitToStartMs.p99,
    streamP99Ms: r.stream.submitToStartMs.p99,
    streamMakespanS: r.stream.makespanS,
    burstP50Ms: r.burst.releaseToStartMs.p50,
    burstP99Ms: r.burst.releaseToStartMs.p99,
    burstMakespanS: r.burst.makespanS,
  };
}

/** A bench:churn-slurm JSON (`BENCH_SLURM_BASELINE`), checked enough to fail with its name. */
export function readSlurmReport(file: string): ChurnReport {
  const r = JSON.parse(readFileSync(file, 'utf8')) as ChurnReport & { bench?: string };
  if (r.bench !== 'churn-slurm' || !r.accept?.serial || !r.burst?.releaseToStartMs)
    throw new Error(`BENCH_SLURM_BASELINE: ${file} is not a bench:churn-slurm report`);
  return r;
}

const r0 = (x: number) => fmt(x, 0);
const r2 = (x: number) => fmt(x, 2);

export interface ChurnFigure {
  label: string;
  key: keyof ChurnRow;
  /** Which way is better. */
  better: 'higher' | 'lower';
  format: (x: number) => string;
}

/** The rows both benches print, in the issue's order. */
export function churnFigures(o: { jobs: number; acceptClients: number }): ChurnFigure[] {
  const f = (label: string, key: keyof ChurnRow, better: 'higher' | 'lower', format = r0): ChurnFigure => ({ label, key, better, format });
  return [
    f('accept, one client (jobs/s)', 'acceptSerialPerS', 'higher'),
    f(`accept, ${o.acceptClients} clients (jobs/s)`, 'acceptParallelPerS', 'higher'),
    f('idle submit -> start p50 (ms)', 'idleP50Ms', 'lower'),
    f('idle submit -> start p99 (ms)', 'idleP99Ms', 'lower'),
    f(`stream of ${o.jobs}: submit -> start p99 (ms)`, 'streamP99Ms', 'lower'),
    f('stream makespan (s)', 'streamMakespanS', 'lower', r2),
    f(`burst of ${o.jobs}: release -> start p50 (ms)`, 'burstP50Ms', 'lower'),
    f('burst release -> start p99 (ms)', 'burstP99Ms', 'lower'),
    f('burst makespan (s)', 'burstMakespanS', 'lower', r2),
  ];
}

/** Whether `row`'s figure is better than `than`'s. */
export function beats(fig: ChurnFigure, row: ChurnRow, than: ChurnRow): boolean {
  return fig.better === 'higher' ? row[fig.key] > than[fig.key] : row[fig.key] < than[fig.key];
}
