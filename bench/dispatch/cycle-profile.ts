/**
 * The scheduler's cycle alone, in-process, on the bench's fleet: seeds `gantry_bench_cycle` with
 * PROFILE_NODES nodes (the agent's simulated layout) all heard now in Redis db 12, queues
 * PROFILE_JOBS one-GPU jobs, then runs the real SchedulingCycle until nothing is queued and prints
 * what each cycle spent per step. No Kafka and no other service: a quick loop for profiling what
 * bench:dispatch measures end to end (node --cpu-prof works on it). PROFILE_MAX_RUNTIME_S gives the
 * jobs a limit and GANTRY_SCHEDULER_BACKFILL chooses the backfill, to compare runtime with strict.
 *
 *   npm run build && node dist/bench/dispatch/cycle-profile.js
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Redis from 'ioredis';
import { REDIS_KEYS, autocommit, createDataSource, createJobs } from '@gantry/persistence';
import { flushRedisDb, recreateDatabase } from '@gantry/stack';
// The one place outside an app that imports its insides: this profiles the scheduler's own cycle
// in-process, and an app exports nothing (bench/ is a tool, not a dependency of anything).
/* eslint-disable @nx/enforce-module-boundaries */
import { SchedulerEnv } from '../../apps/scheduler/src/config';
import { PlacementCommitter } from '../../apps/scheduler/src/placement-committer';
import { PreemptionStep } from '../../apps/scheduler/src/preemption-step';
import { SchedulingCycle } from '../../apps/scheduler/src/scheduling-cycle';
/* eslint-enable @nx/enforce-module-boundaries */
import { BENCH_DATABASE } from '../api/infra';

const env = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);
const NODES = env('PROFILE_NODES', 50000);
const JOBS = env('PROFILE_JOBS', 5000);
/** Every 1/share-th job is a gang of two whole H100 nodes, as in bench:dispatch's phase 1. */
const GANG_SHARE = env('PROFILE_GANG_SHARE', 0.05);
/** Every job's maxRuntimeSeconds (0: none), so that runtime backfill has windows to fill. */
const MAX_RUNTIME_S = env('PROFILE_MAX_RUNTIME_S', 0);
const DB = process.env.PROFILE_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gantry_bench_cycle';
const REDIS = process.env.PROFILE_REDIS_URL || 'redis://127.0.0.1:6379/12';
const root = join(__dirname, '..', '..', '..');

const MODELS = [
  { upTo: 0.5, model: 'H100', gpus: 8, cores: 96, mem: 1048576 },
  { upTo: 0.8, model: 'A100', gpus: 8, cores: 64, mem: 524288 },
  { upTo: 0.95, model: 'L4', gpus: 4, cores: 32, mem: 262144 },
  { upTo: 1, model: null, gpus: 0, cores: 32, mem: 131072 },
];

async function main() {
  await recreateDatabase(root, DB, BENCH_DATABASE);
  await flushRedisDb(REDIS);
  const ds = createDataSource({ url: DB, poolSize: 10, applicationName: 'cycle-profile' });
  await ds.initialize();
  const redis = new Redis(REDIS);

  // Seed: the agent's layout (apps/node-agent/src/fleet/fleet-layout.ts), every node heard now.
  const ids: string[] = [];
  for (let off = 0; off < NODES; off += 5000) {
    const rows = [];
    for (let i = off; i < Math.min(NODES, off + 5000); i++) {
      const m = MODELS.find((x) => (i * 0.6180339887) % 1 < x.upTo)!;
      const rack = Math.floor(i / 20);
      rows.push({ id: `bench-${String(i).padStart(5, '0')}`, zone: `zone-${'abc'[rack % 3]}`, rack: `bench-r${String(rack).padStart(4, '0')}`, ...m });
    }
    ids.push(...rows.map((r) => r.id));
    await ds.query(
      `INSERT INTO nodes (id, zone, rack, gpu_model, gpus_total, gpu_indices, cpu_cores, memory_mib, first_seen_at, updated_at)
       SELECT id, zone, rack, model, gpus, ARRAY(SELECT generate_series(0, gpus - 1)), cores, mem, now(), now() FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::bigint[])
         AS t (id, zone, rack, model, gpus, cores, mem)`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.zone),
        rows.map((r) => r.rack),
        rows.map((r) => r.model),
        rows.map((r) => r.gpus),
        rows.map((r) => r.cores),
        rows.map((r) => r.mem),
      ],
    );
  }
  // Heard over the last minute (as with the bench's 60 s beats), with thresholds far above the
  // run's length: healthy throughout. Nothing beats during the run.
  const heardAt = Date.now() - 10_000;
  for (let off = 0; off < ids.length; off += 5000) {
    await redis.zadd(REDIS_KEYS.lastSeen, ...ids.slice(off, off + 5000).flatMap((id, k) => [heardAt - ((off + k) % 60_000), id]));
  }
  const t = Date.now();
  for (let off = 0; off < JOBS; off += 1000) {
    const batch = Array.from({ length: Math.min(1000, JOBS - off) }, (_, k) => ({
      job: {
        id: randomUUID(),
        owner: 'bench',
        queue: 'default',
        name: 'profile',
        image: 'none',
        command: ['true'],
        env: {},
        labels: {},
        ...(GANG_SHARE > 0 && (off + k) % Math.round(1 / GANG_SHARE) === 0
          ? { gpus: 8, gpuModel: 'H100', cpuCores: 32, memoryMiB: 262144, nodes: 2 }
          : { gpus: 1, gpuModel: null, cpuCores: 4, memoryMiB: 16384, nodes: 1 }),
        maxRetries: 0,
        traceParent: null,
        createdAt: new Date(t + off + k),
        ...(MAX_RUNTIME_S > 0 ? { maxRuntimeSeconds: MAX_RUNTIME_S } : {}),
      },
      idempotency: null,
    }));
    await createJobs(autocommit(ds), batch, new Date(), 0);
  }
  await ds.query('ANALYZE');
  console.error(`seeded ${NODES} nodes, ${JOBS} jobs`);

  const config = Object.assign(new SchedulerEnv(), {
    GANTRY_INSTANCE_ID: 'profile',
    GANTRY_NODE_SUSPECT_MS: 3_600_000,
    GANTRY_NODE_DEAD_MS: 7_200_000,
    ...(process.env.GANTRY_SCHEDULER_BATCH ? { GANTRY_SCHEDULER_BATCH: Number(process.env.GANTRY_SCHEDULER_BATCH) } : {}),
    ...(process.env.GANTRY_SCHEDULER_LOOKAHEAD ? { GANTRY_SCHEDULER_LOOKAHEAD: Number(process.env.GANTRY_SCHEDULER_LOOKAHEAD) } : {}),
    ...(process.env.GANTRY_SCHEDULER_BACKFILL
      ? { GANTRY_SCHEDULER_BACKFILL: process.env.GANTRY_SCHEDULER_BACKFILL as SchedulerEnv['GANTRY_SCHEDULER_BACKFILL'] }
      : {}),
  });
  const logger = { debug() {}, info() {}, warn: console.warn, error: console.error };
  const cycle = new SchedulingCycle(ds, redis, config, logger as never, new PlacementCommitter(ds), new PreemptionStep(ds, config, logger as never));
  const start = performance.now();
  let placed = 0;
  let cycles = 0;
  const cpu0 = process.cpuUsage();
  while (placed < JOBS) {
    const c0 = performance.now();
    const r = await cycle.run();
    cycles++;
    placed += r.placed;
    const phases = Object.entries(r.steps ?? {})
      .map(([k, v]) => `${k} ${v.toFixed(0)}`)
      .join(', ');
    console.error(`cycle ${cycles}: ${r.placed} placed, ${r.lostRaces} lost, ${(performance.now() - c0).toFixed(0)} ms (${phases})`);
    if (r.placed === 0) break;
  }
  const s = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  console.error(
    `${placed} placed in ${s.toFixed(1)} s: ${(placed / s).toFixed(0)}/s over ${cycles} cycles; CPU ${((cpu.user + cpu.system) / 1e6 / s).toFixed(2)} cores`,
  );
  redis.disconnect();
  await ds.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
