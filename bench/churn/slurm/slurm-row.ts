import { readFileSync } from 'node:fs';

/** Slurm's figures in bench:churn's scenario, as bench:churn compares them. */
export interface SlurmRow {
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
export const ISSUE_SLURM_ROW: SlurmRow = {
  acceptSerialPerS: 280, acceptParallelPerS: 590, idleP50Ms: 400, idleP99Ms: 990, streamP99Ms: 6100, streamMakespanS: 10.4,
  burstP50Ms: 5300, burstP99Ms: 9200, burstMakespanS: 9.3,
};

interface Latencies {
  p50: number;
  p99: number;
}

/** What bench:churn-slurm writes that the row is made of. */
export interface SlurmReport {
  startedAt: string;
  accept: { serial: { perS: number }; parallel: { perS: number } };
  idle: { submitToStartMs: Latencies };
  stream: { submitToStartMs: Latencies; makespanS: number };
  burst: { releaseToStartMs: Latencies; makespanS: number };
}

export function slurmRowOf(r: SlurmReport): SlurmRow {
  return {
    acceptSerialPerS: r.accept.serial.perS, acceptParallelPerS: r.accept.parallel.perS,
    idleP50Ms: r.idle.submitToStartMs.p50, idleP99Ms: r.idle.submitToStartMs.p99,
    streamP99Ms: r.stream.submitToStartMs.p99, streamMakespanS: r.stream.makespanS,
    burstP50Ms: r.burst.releaseToStartMs.p50, burstP99Ms: r.burst.releaseToStartMs.p99, burstMakespanS: r.burst.makespanS,
  };
}

/** A bench:churn-slurm JSON (`BENCH_SLURM_BASELINE`), checked enough to fail with its name. */
export function readSlurmReport(file: string): SlurmReport {
  const r = JSON.parse(readFileSync(file, 'utf8')) as SlurmReport & { bench?: string };
  if (r.bench !== 'churn-slurm' || !r.accept?.serial || !r.burst?.releaseToStartMs) throw new Error(`BENCH_SLURM_BASELINE: ${file} is not a bench:churn-slurm report`);
  return r;
}
