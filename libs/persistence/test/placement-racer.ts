/*
 * One racing scheduler for placement-guarantees.int-spec.ts, run as its own OS process from the
 * build output (dist/libs/persistence/test/placement-racer.js). It plans placements of the given
 * jobs onto the given nodes from its own snapshot, says "ready", waits for "go" on stdin (so every
 * racer commits its first plan, made from the same state, at once), then commits with
 * commitPlacementsThatHold, the scheduler's statement, and plans again from fresh state until
 * nothing more fits. It prints what it placed and lost as one JSON line.
 *
 * The first plan takes the jobs in the order given, on this racer's own share of the nodes (node i
 * belongs to racer i mod RACE_RACERS): every racer wants the same jobs on nodes no other racer
 * touches, so only the job's compare-and-set stands between a job and a second placement. Later
 * plans take the queued jobs in random order over every node, so racers collide on nodes.
 *
 * env: DATABASE_URL, RACE_NODES and RACE_JOBS (comma-separated ids), RACE_INDEX, RACE_RACERS, RACE_TOPIC.
 */
import { createInterface } from 'node:readline';
import { DataSource } from 'typeorm';
import { chooseGpuIndices, holdGpuIndices } from '@gantry/domain';
import { PlacementWrite, Sql, autocommit, commitPlacementsThatHold, createDataSource, findJobs, loadNodes } from '@gantry/persistence';
import { seededRandom } from '@gantry/testing';

const MAX_ROUNDS = 500;

interface Plan {
  writes: PlacementWrite[];
  versions: Map<string, number>;
}

function shuffled<T>(items: T[], rand: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Greedy: each queued job, in `order`, on the first of `nodeIds` (in `order`) with room for a rank. */
async function planFrom(sql: Sql, nodeIds: string[], jobIds: string[], topic: string, order: <T>(items: T[]) => T[]): Promise<Plan> {
  const nodes = await loadNodes(sql, nodeIds);
  const free = new Map(
    nodes.map((n) => [n.id, { gpus: n.gpusTotal - n.gpusAllocated, cpu: n.cpuCores - n.cpuAllocated, mem: n.memoryMiB - n.memoryAllocated }]),
  );
  // Devices as the scheduler picks them: lowest free first, what this plan took counted as held.
  const devices = new Map(nodes.map((n) => [n.id, { gpusTotal: n.gpusTotal, gpuIndices: n.gpuIndices, gpusHeld: [...n.gpusHeld] }]));
  const byId = new Map((await findJobs(sql, jobIds)).map((j) => [j.id, j]));
  const writes: PlacementWrite[] = [];
  for (const job of order(jobIds.map((id) => byId.get(id)!).filter((j) => j.state === 'QUEUED'))) {
    const chosen = order(nodes)
      .filter((n) => {
        const f = free.get(n.id)!;
        return f.gpus >= job.gpus && f.cpu >= job.cpuCores && f.mem >= job.memoryMiB;
      })
      .slice(0, job.nodes)
      .map((n) => n.id);
    if (chosen.length < job.nodes) continue;
    const gpuIndices = chosen.map((id) => chooseGpuIndices(devices.get(id)!, job.gpus));
    if (gpuIndices.some((d) => d === null)) continue;
    chosen.forEach((id, rank) => {
      const f = free.get(id)!;
      free.set(id, { gpus: f.gpus - job.gpus, cpu: f.cpu - job.cpuCores, mem: f.mem - job.memoryMiB });
      const d = devices.get(id)!;
      d.gpusHeld = holdGpuIndices(d, gpuIndices[rank]!);
    });
    writes.push({
      jobId: job.id,
      expectedVersion: job.version,
      attempt: job.attempt + 1,
      nodeIds: chosen,
      gpuIndices: gpuIndices as number[][],
      perRank: { gpus: job.gpus, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB },
      commands: chosen.map((nodeId) => ({ topic, key: nodeId, value: { type: 'RUN', jobId: job.id, nodeId } })),
    });
  }
  return { writes, versions: new Map(nodes.map((n) => [n.id, n.version])) };
}

async function main(): Promise<void> {
  const env = (name: string) => {
    const v = process.env[name];
    if (!v) throw new Error(`${name} is required`);
    return v;
  };
  const nodeIds = env('RACE_NODES').split(',');
  const jobIds = env('RACE_JOBS').split(',');
  const topic = env('RACE_TOPIC');
  const index = Number(env('RACE_INDEX'));
  const ownNodes = nodeIds.filter((_, i) => i % Number(env('RACE_RACERS')) === index);
  const rand = seededRandom(index + 1); // each racer shuffles differently, every run the same way
  const randomly = <T>(items: T[]) => shuffled(items, rand);
  const ds: DataSource = createDataSource({ url: env('DATABASE_URL'), poolSize: 1, applicationName: 'placement-racer' });
  await ds.initialize();
  try {
    const sql = autocommit(ds);
    let plan = await planFrom(sql, ownNodes, jobIds, topic, (items) => items);
    const lines = createInterface({ input: process.stdin });
    const go = new Promise<void>((resolve) => lines.on('line', (l) => l.trim() === 'go' && resolve()));
    process.stdout.write('ready\n');
    await go;
    lines.close();
    const placed: string[] = [];
    let lost = 0;
    let rounds = 0;
    while (plan.writes.length > 0) {
      if (++rounds > MAX_ROUNDS) throw new Error(`still placing after ${MAX_ROUNDS} rounds`);
      const result = await commitPlacementsThatHold(sql, plan.writes, plan.versions, new Date());
      placed.push(...result.placed);
      lost += result.lost.length;
      plan = await planFrom(sql, nodeIds, jobIds, topic, randomly);
    }
    process.stdout.write(`${JSON.stringify({ placed, lost, rounds })}\n`);
  } finally {
    await ds.destroy();
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
