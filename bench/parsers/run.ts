/**
 * bench:parsers: what parsing and validating one Kafka message costs, in-process, per message type
 * (a full-telemetry heartbeat with 8 GPUs, a liveness beat, a job report, a RUN, a KILL), with
 * JSON.parse alone beside it as the floor. Quick (a few seconds) and quiet: no infrastructure.
 *
 * Each message is parsed BENCH_PARSERS_ITERATIONS times per round after a warm-up, for
 * BENCH_PARSERS_ROUNDS rounds; it prints the median, fastest and slowest round in CPU ns per message,
 * and writes them as JSON to .cache/bench/parsers-<time>.json. The parse functions are the
 * contracts' exports that the consumers call (parseHeartbeat, parseJobReport, parseAgentCommand).
 *
 * BENCH_PARSERS_BASELINE=<dir> also loads those functions from another commit's build (the folder
 * that holds its dist/libs/contracts/src, see docs/benchmarks/history/parsers.md) and runs its rounds interleaved
 * with this tree's, so both see the same machine at the same moments.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import * as contracts from '@gantry/contracts';
import { numberFromEnv } from '@gantry/stack';

const ITERATIONS = numberFromEnv('BENCH_PARSERS_ITERATIONS', 100_000);
const ROUNDS = numberFromEnv('BENCH_PARSERS_ROUNDS', 7);
const WARMUP = numberFromEnv('BENCH_PARSERS_WARMUP', 50_000);

type Parse = (raw: Buffer) => { ok: boolean };
interface Parsers {
  parseHeartbeat: Parse;
  parseJobReport: Parse;
  parseAgentCommand: Parse;
}
const current: Parsers = contracts;
const baselineDir = process.env.BENCH_PARSERS_BASELINE;
const baseline: Parsers | null = baselineDir ? require(resolve(baselineDir, 'dist', 'libs', 'contracts', 'src')) : null;

const jobId = '3f2b8c1e-6a4d-4e7b-9c0a-1d2e3f4a5b6c';
const gpu = (index: number) => ({ index, model: 'H100', memoryMiB: 81920, memoryUsedMiB: 40960 + index, utilization: 0.87, healthy: true });
const liveness = {
  nodeId: 'sim-00042',
  bootId: '6f1c2a9e-1b7d-4c3e-8f20-5a6b7c8d9e0f',
  seq: 118,
  sentAt: 1796000000000,
  zone: 'us-east-1a',
  rack: 'r07',
  running: [{ jobId, attempt: 1 }],
};
const MESSAGES: Array<{ name: string; value: object; parser: keyof Parsers }> = [
  {
    name: 'heartbeat, 8 GPUs',
    value: {
      ...liveness,
      gpus: Array.from({ length: 8 }, (_, i) => gpu(i)),
      cpu: { cores: 96, utilization: 0.41 },
      memory: { totalMiB: 1048576, usedMiB: 300000 },
    },
    parser: 'parseHeartbeat',
  },
  { name: 'liveness beat', value: liveness, parser: 'parseHeartbeat' },
  { name: 'job report', value: { nodeId: 'sim-00042', jobId, attempt: 1, state: 'SUCCEEDED', exitCode: 0, at: 1796000000000 }, parser: 'parseJobReport' },
  {
    name: 'RUN',
    value: {
      type: 'RUN',
      nodeId: 'sim-00042',
      jobId,
      attempt: 1,
      image: 'registry/pytorch:24.05',
      command: ['python', 'train.py', '--epochs', '3'],
      env: { EPOCHS: '3', SIM_DURATION_MS: '1000' },
      resources: { gpus: 8, gpuModel: 'H100', cpuCores: 32, memoryMiB: 262144 },
      gang: { size: 2, rank: 0, nodeIds: ['sim-00042', 'sim-00043'] },
    },
    parser: 'parseAgentCommand',
  },
  { name: 'KILL', value: { type: 'KILL', nodeId: 'sim-00042', jobId, attempt: 1, reason: 'CANCELLED_BY_USER' }, parser: 'parseAgentCommand' },
];

/**
 * CPU ns per message (this process's user + system time) of `n` calls of `fn`, cycling over 64
 * copies of the bytes. CPU time, not wall time: on a shared machine a round's wall time also counts
 * the time other processes held the core.
 */
function timeRound(fn: (raw: Buffer) => unknown, bufs: Buffer[], n: number): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn(bufs[i & 63]);
  const t = process.cpuUsage(t0);
  return ((t.user + t.system) * 1000) / n;
}

interface Rounds {
  median: number;
  min: number;
  max: number;
}

/** Rounds of each function in turn (warmed up first), so that every one sees the same moments of the machine. */
function measure(fns: Record<string, (raw: Buffer) => unknown>, bufs: Buffer[]): Record<string, Rounds> {
  for (const fn of Object.values(fns)) timeRound(fn, bufs, WARMUP);
  const rounds: Record<string, number[]> = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) for (const [k, fn] of Object.entries(fns)) rounds[k].push(timeRound(fn, bufs, ITERATIONS));
  return Object.fromEntries(
    Object.entries(rounds).map(([k, v]) => {
      const sorted = [...v].sort((a, b) => a - b);
      return [k, { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted[sorted.length - 1] }];
    }),
  );
}

function main(): void {
  const results = MESSAGES.map(({ name, value, parser }) => {
    const bufs = Array.from({ length: 64 }, () => Buffer.from(JSON.stringify(value)));
    const fns: Record<string, (raw: Buffer) => unknown> = { jsonParse: (raw) => JSON.parse(raw.toString('utf8')), current: current[parser] };
    if (baseline) fns.baseline = baseline[parser];
    for (const [k, fn] of Object.entries(fns)) {
      const check = fn(bufs[0]) as { ok?: boolean };
      if (k !== 'jsonParse' && !check.ok) throw new Error(`${name}: the sample does not parse with ${k}: ${JSON.stringify(check)}`);
    }
    return { message: name, bytes: bufs[0].length, ns: measure(fns, bufs) };
  });
  const fmt = (r?: Rounds) => (r ? `${r.median.toFixed(0).padStart(6)} (${r.min.toFixed(0)}-${r.max.toFixed(0)})` : '');
  console.log(`CPU ns per message, median of ${ROUNDS} rounds of ${ITERATIONS} (fastest-slowest round)${baseline ? `; baseline: ${baselineDir}` : ''}`);
  console.log(`${'message'.padEnd(20)}${'bytes'.padStart(7)}   ${'JSON.parse alone'.padEnd(22)}${baseline ? 'baseline'.padEnd(22) : ''}this tree`);
  for (const r of results)
    console.log(
      `${r.message.padEnd(20)}${String(r.bytes).padStart(7)}   ${fmt(r.ns.jsonParse).padEnd(22)}${baseline ? fmt(r.ns.baseline).padEnd(22) : ''}${fmt(r.ns.current)}`,
    );
  const out = join(process.cwd(), '.cache', 'bench');
  mkdirSync(out, { recursive: true });
  const file = join(out, `parsers-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        at: new Date().toISOString(),
        node: process.version,
        cpu: cpus()[0]?.model,
        cores: cpus().length,
        loadavg: loadavg(),
        iterations: ITERATIONS,
        rounds: ROUNDS,
        warmup: WARMUP,
        baseline: baselineDir ?? null,
        results,
      },
      null,
      2,
    ),
  );
  console.log(`written to ${file}`);
}

main();
