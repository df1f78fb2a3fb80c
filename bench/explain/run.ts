/**
 * bench:explain: how far GET /v1/jobs/{id}/explain's estimatedStartAt falls from the start a job
 * really gets (issue 17, ADR 0024). Pure and in-process, no stack: a seeded workload (workload.ts)
 * is replayed through planCycle on a simulated fleet (replay.ts), explainJob is asked at each
 * submission, and the actual start is recorded when the plan places the job.
 *
 * Scenarios: jobs end early at a random fraction of their limit (how real jobs use limits), at two
 * loads; and controls where every job runs exactly its limit (in three queues of three bands, and in
 * one queue), which separate what the runtimes it cannot know and later higher-band submissions do
 * from what the estimate's own model (band-then-age order, greedy fit) gets wrong.
 *
 * Prints the median and p90 absolute error and the median signed error (estimate - actual;
 * positive: the estimate was late) overall, for jobs that waited, and by queue position at
 * submission; writes them as JSON to .cache/bench/explain-<time>.json. A few seconds.
 * BENCH_EXPLAIN_JOBS (default 3000) and BENCH_EXPLAIN_SEED (default 17) change the workload.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { numberFromEnv } from '@gantry/stack';
import { fmt, percentile, table } from '../api/stats';
import { FleetOptions, Sample, replay } from './replay';
import { ReplayQueue, WorkloadOptions, generateWorkload } from './workload';

const JOBS = numberFromEnv('BENCH_EXPLAIN_JOBS', 3000);
const SEED = numberFromEnv('BENCH_EXPLAIN_SEED', 17);

const FLEET: FleetOptions = { nodes: 32, gpusPerNode: 8, cpuCores: 96, memoryMiB: 1_048_576, racks: 4 };
const QUEUES: ReplayQueue[] = [
  { name: 'prod', priority: 50, quotaGpus: null, share: 0.1 },
  { name: 'research', priority: 10, quotaGpus: 128, share: 0.3 },
  { name: 'batch', priority: 0, quotaGpus: null, share: 0.6 },
];

interface Scenario {
  name: string;
  workload: Omit<WorkloadOptions, 'seed' | 'jobs' | 'fleetGpus' | 'queues'>;
  queues?: ReplayQueue[];
}
const SCENARIOS: Scenario[] = [
  { name: 'early-end, load 0.95', workload: { load: 0.95, earlyEnd: { min: 0.1, max: 1 }, atLimitShare: 0.1 } },
  { name: 'early-end, load 1.1', workload: { load: 1.1, earlyEnd: { min: 0.1, max: 1 }, atLimitShare: 0.1 } },
  { name: 'runs to limit, load 1.1', workload: { load: 1.1, earlyEnd: { min: 1, max: 1 }, atLimitShare: 1 } },
  // One queue: no later job can pass an earlier one by band, so what is left is the model's own error.
  {
    name: 'runs to limit, load 1.1, one queue',
    workload: { load: 1.1, earlyEnd: { min: 1, max: 1 }, atLimitShare: 1 },
    queues: [{ name: 'batch', priority: 0, quotaGpus: null, share: 1 }],
  },
];

const POSITION_BUCKETS: Array<[string, number, number]> = [
  ['1', 1, 1],
  ['2-10', 2, 10],
  ['11-50', 11, 50],
  ['51-200', 51, 200],
  ['>200', 201, Infinity],
];

interface Stats {
  n: number;
  nulls: number;
  medianAbsMin: number;
  p90AbsMin: number;
  medianSignedMin: number;
  medianWaitMin: number;
}

function stats(samples: Sample[]): Stats {
  const known = samples.filter((s) => s.estimatedStartAtMs !== null);
  const abs = known.map((s) => Math.abs(s.estimatedStartAtMs! - s.actualStartAtMs) / 60_000).sort((a, b) => a - b);
  const signed = known.map((s) => (s.estimatedStartAtMs! - s.actualStartAtMs) / 60_000).sort((a, b) => a - b);
  const waits = samples.map((s) => (s.actualStartAtMs - s.submitAtMs) / 60_000).sort((a, b) => a - b);
  return {
    n: samples.length,
    nulls: samples.length - known.length,
    medianAbsMin: percentile(abs, 50),
    p90AbsMin: percentile(abs, 90),
    medianSignedMin: percentile(signed, 50),
    medianWaitMin: percentile(waits, 50),
  };
}

const row = (label: string, s: Stats) => [
  label,
  String(s.n),
  String(s.nulls),
  fmt(s.medianWaitMin),
  fmt(s.medianAbsMin),
  fmt(s.p90AbsMin),
  fmt(s.medianSignedMin),
];
const HEADER = ['', 'jobs', 'null', 'wait p50 min', '|err| p50 min', '|err| p90 min', 'err p50 min'];

const results: Record<string, unknown> = {};
for (const sc of SCENARIOS) {
  const started = process.hrtime.bigint();
  const queues = sc.queues ?? QUEUES;
  const jobs = generateWorkload({ ...sc.workload, seed: SEED, jobs: JOBS, fleetGpus: FLEET.nodes * FLEET.gpusPerNode, queues });
  const samples = replay(jobs, queues, FLEET);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const waited = samples.filter((s) => s.actualStartAtMs > s.submitAtMs);
  const rows = [HEADER, row('all', stats(samples)), row('waited', stats(waited))];
  const byPosition: Record<string, Stats> = {};
  for (const [label, lo, hi] of POSITION_BUCKETS) {
    const s = stats(samples.filter((x) => x.positionOverall >= lo && x.positionOverall <= hi));
    byPosition[label] = s;
    rows.push(row(`position ${label}`, s));
  }
  const byQueue: Record<string, Stats> = {};
  for (const q of queues) {
    const s = stats(samples.filter((x) => x.queue === q.name));
    byQueue[q.name] = s;
    rows.push(row(`queue ${q.name}`, s));
  }
  console.log(`\n${sc.name} (${JOBS} jobs, seed ${SEED}, ${FLEET.nodes} nodes × ${FLEET.gpusPerNode} GPUs, ${fmt(ms / 1000)} s)\n${table(rows)}`);
  results[sc.name] = { workload: sc.workload, all: stats(samples), waited: stats(waited), byPosition, byQueue };
}

const dir = join(process.cwd(), '.cache', 'bench');
mkdirSync(dir, { recursive: true });
const file = join(dir, `explain-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(file, JSON.stringify({ jobs: JOBS, seed: SEED, fleet: FLEET, queues: QUEUES, results }, null, 2));
console.log(`\nwritten to ${file}`);
