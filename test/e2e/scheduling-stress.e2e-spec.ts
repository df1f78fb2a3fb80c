import { DataSource } from 'typeorm';
import { GantryClient, JobSpec } from '@gantry/client';
import { Stack, waitFor } from '@gantry/stack';
import { openDataSource, startTestStack, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

// Three scheduler replicas race over one simulated fleet while a watcher reads the database as
// often as it can: first for nodes, ranks and devices, then for one cohort's quotas (ADR 0039). The fleet is deterministic (apps/node-agent/src/fleet/fleet-layout.ts): 100
// nodes are 5 racks of 20, about half 8 x H100, a third 8 x A100, the rest 4 x L4 or CPU-only.
const NODES = 100;
const JOBS = 2000;

let stack: Stack;
let api: GatewayClient;
let ds: DataSource;
let tag: string;
let adminToken: string;

jest.setTimeout(240_000);

beforeAll(async () => {
  const e2e = await startTestStack({
    suite: 'scheduling-stress',
    simNodes: NODES,
    replicas: { scheduler: 3 },
    // Beats every 3 s: 100 nodes at 1 s keep the ingester and the reconciler busy, and the
    // reconciler's grace before repeating a RUN is one beat period.
    // This test is about placement, not failure detection: on this small machine a RUN can take
    // longer than the default 15 s phantom grace to reach the agent at the peak of the burst, and a
    // gang rank waiting for it would be declared lost (PHANTOM) although nothing failed.
    env: { LOG_LEVEL: 'warn', GANTRY_HEARTBEAT_MS: '3000', GANTRY_PHANTOM_GRACE_MS: '60000' },
    agentEnv: { GANTRY_SIM_EXECUTOR: 'sleep' },
  });
  ({ stack, tag } = e2e);
  adminToken = e2e.adminToken;
  api = new GatewayClient(stack.gatewayUrl, adminToken);
  ds = await openDataSource();
  // Placement needs the fleet registered (Postgres) and heard (Redis): wait for every node.
  await waitFor('fleet registered', async () => (await nodeCount()) === NODES, { timeoutMs: 30_000, intervalMs: 200 });
});

afterAll(async () => {
  await ds?.destroy();
  await stack?.stop();
});

async function nodeCount(): Promise<number> {
  const [r] = await ds.query(`SELECT count(*)::int AS n FROM nodes WHERE id LIKE $1`, [`${tag}-%`]);
  return r.n;
}

/** A small deterministic generator, so a failing mix can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

/** Single-node GPU jobs, CPU-only jobs and gangs of 2..4, in sizes from a sliver to whole nodes. */
function jobMix(count: number, queues: string[], seed: number) {
  const r = prng(seed);
  return Array.from({ length: count }, (_, i) => {
    const kind = r();
    const gang = kind >= 0.85;
    const cpuOnly = kind >= 0.6 && !gang;
    const model = !cpuOnly && r() < 0.3 ? pick(r, ['H100', 'A100', 'L4']) : null;
    // An L4 node has 4 GPUs: asking for more would be NO_MATCHING_NODES, never finishing.
    const gpus = cpuOnly ? 0 : Math.min(pick(r, gang ? [2, 4, 8] : [1, 1, 2, 4, 8]), model === 'L4' ? 4 : 8);
    return {
      queue: queues[i % queues.length],
      name: `stress-${i}`,
      image: 'none',
      command: ['true'],
      env: { SIM_DURATION_MS: String(100 + Math.floor(r() * 300)) },
      labels: { suite: tag },
      resources: {
        gpus,
        gpuModel: model,
        cpuCores: pick(r, [1, 2, 4, 8, 16, 32]),
        memoryMiB: pick(r, [512, 4096, 32768, 131072]),
      },
      nodes: gang ? pick(r, [2, 3, 4]) : 1,
    };
  });
}

/**
 * Submits through the client library, as a user would: a connection the gateway closes as it is
 * reused (keep-alive expiry on a loaded box) is retried with the same Idempotency-Key, so a retry
 * never makes a second job.
 */
async function submitAll(bodies: object[], concurrency: number): Promise<string[]> {
  const client = new GantryClient({ baseUrl: stack.gatewayUrl, token: adminToken });
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        ids.push((await client.createJob(body as JobSpec)).job.id);
      }
    }),
  );
  return ids;
}

/**
 * One consistent snapshot per statement: every node's counters against its total, and against the
 * sum of what its unreleased ranks hold (placement and release change both in one transaction).
 * Also says how many nodes held live ranks, so the watcher can tell a look at work from a look at
 * an idle fleet.
 */
async function capacitySnapshot(): Promise<{ violations: string[]; busyNodes: number }> {
  const rows: Array<Record<string, string | number>> = await ds.query(
    `WITH live AS (
       SELECT node_id, sum(gpus) AS g, sum(cpu_cores) AS c, sum(memory_mib) AS m
       FROM attempt_nodes WHERE released_at IS NULL AND node_id LIKE $1 GROUP BY node_id)
     SELECT n.id, n.gpus_total, n.gpus_allocated, n.cpu_cores, n.cpu_allocated, n.memory_mib, n.memory_allocated,
       coalesce(l.g, 0) AS live_g, coalesce(l.c, 0) AS live_c, coalesce(l.m, 0) AS live_m
     FROM nodes n LEFT JOIN live l ON l.node_id = n.id WHERE n.id LIKE $1`,
    [`${tag}-%`],
  );
  const bad: string[] = [];
  for (const n of rows) {
    const v = (k: string) => Number(n[k]);
    for (const [res, total, allocated, live] of [
      ['gpus', 'gpus_total', 'gpus_allocated', 'live_g'],
      ['cpu', 'cpu_cores', 'cpu_allocated', 'live_c'],
      ['memory', 'memory_mib', 'memory_allocated', 'live_m'],
    ]) {
      if (v(allocated) > v(total) || v(live) > v(total) || v(live) !== v(allocated)) {
        bad.push(`${n.id} ${res}: total ${v(total)}, allocated ${v(allocated)}, held by live ranks ${v(live)}`);
      }
    }
  }
  const busyNodes = rows.filter((n) => Number(n.live_c) > 0 || Number(n.live_g) > 0 || Number(n.live_m) > 0).length;
  return { violations: bad, busyNodes };
}

async function capacityViolations(): Promise<string[]> {
  return (await capacitySnapshot()).violations;
}

/** A job rank held twice at once (two live attempts), or an attempt with only some of its gang's ranks. */
async function placementViolations(queues: string[]): Promise<string[]> {
  const twice: Array<{ job_id: string; rank: number; n: number }> = await ds.query(
    `SELECT job_id, rank, count(*)::int AS n FROM attempt_nodes
     WHERE released_at IS NULL AND node_id LIKE $1 GROUP BY job_id, rank HAVING count(*) > 1`,
    [`${tag}-%`],
  );
  const partial: Array<{ job_id: string; attempt: number; ranks: number; nodes: number }> = await ds.query(
    `SELECT a.job_id, a.attempt, count(*)::int AS ranks, j.nodes FROM attempt_nodes a JOIN jobs j ON j.id = a.job_id
     WHERE j.queue = ANY($1::text[]) GROUP BY a.job_id, a.attempt, j.nodes HAVING count(*) <> j.nodes`,
    [queues],
  );
  return [
    ...twice.map((r) => `job ${r.job_id} rank ${r.rank} live ${r.n} times`),
    ...partial.map((r) => `job ${r.job_id} attempt ${r.attempt} has ${r.ranks} of ${r.nodes} ranks`),
  ];
}

/**
 * GPU devices, in one snapshot per statement: a device held by two live ranks on one node, a live
 * rank holding other than exactly its GPU count or a device its node does not report usable, and a
 * node whose held set is not exactly what its live ranks hold (ADR 0019).
 */
async function deviceViolations(): Promise<string[]> {
  const shared: Array<{ node_id: string; d: number; n: number }> = await ds.query(
    `SELECT a.node_id, d, count(*)::int AS n FROM attempt_nodes a, unnest(a.gpu_indices) AS d
     WHERE a.released_at IS NULL AND a.node_id LIKE $1 GROUP BY a.node_id, d HAVING count(*) > 1`,
    [`${tag}-%`],
  );
  const ranks: Array<{ job_id: string; rank: number; node_id: string; gpus: number; held: number; unusable: number }> = await ds.query(
    `SELECT a.job_id, a.rank, a.node_id, a.gpus, cardinality(a.gpu_indices) AS held,
       (SELECT count(*)::int FROM unnest(a.gpu_indices) AS d WHERE NOT d = ANY(n.gpu_indices)) AS unusable
     FROM attempt_nodes a JOIN nodes n ON n.id = a.node_id
     WHERE a.released_at IS NULL AND a.node_id LIKE $1 AND (cardinality(a.gpu_indices) <> a.gpus
       OR EXISTS (SELECT 1 FROM unnest(a.gpu_indices) AS d WHERE NOT d = ANY(n.gpu_indices)))`,
    [`${tag}-%`],
  );
  const nodes: Array<{ id: string; held: number[]; live: number[] }> = await ds.query(
    `SELECT n.id, ARRAY(SELECT unnest(n.gpus_held) ORDER BY 1) AS held,
       ARRAY(SELECT d FROM attempt_nodes a, unnest(a.gpu_indices) AS d WHERE a.node_id = n.id AND a.released_at IS NULL ORDER BY 1) AS live
     FROM nodes n WHERE n.id LIKE $1`,
    [`${tag}-%`],
  );
  return [
    ...shared.map((r) => `${r.node_id} device ${r.d} held by ${r.n} live ranks`),
    ...ranks.map((r) => `job ${r.job_id} rank ${r.rank} on ${r.node_id}: ${r.held} devices for ${r.gpus} GPUs, ${r.unusable} not usable`),
    ...nodes.filter((n) => n.held.join(',') !== n.live.join(',')).map((n) => `${n.id} holds [${n.held}] but its live ranks hold [${n.live}]`),
  ];
}

/**
 * Reads the invariants in a loop until stopped; returns how often it looked while some node held
 * work (a look at an idle fleet proves nothing) and what it saw.
 */
function watch(check: () => Promise<{ violations: string[]; busy: boolean }>) {
  let running = true;
  let samples = 0;
  const violations: string[] = [];
  const done = (async () => {
    while (running) {
      const seen = await check();
      violations.push(...seen.violations);
      if (seen.busy) samples++;
      await new Promise((r) => setTimeout(r, 50)); // pacing, not readiness: leave the CPUs to the stack
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return { samples, violations };
    },
  };
}

/**
 * Quotas and borrowing (ADR 0039), in one snapshot: a queue holding more than its limit, a cohort
 * more than its guarantee, or a queue whose count is not what its unreleased ranks hold.
 */
async function quotaViolations(limits: Record<string, number>, cohortLimit: number): Promise<{ violations: string[]; busy: boolean }> {
  const rows: Array<{ queue: string; counted: string; live: string }> = await ds.query(
    `SELECT c.queue, c.gpus AS counted,
       coalesce((SELECT sum(a.gpus) FROM jobs j JOIN attempt_nodes a ON a.job_id = j.id AND a.released_at IS NULL WHERE j.queue = c.queue), 0) AS live
     FROM queue_gpus_held c WHERE c.queue = ANY($1::text[])`,
    [Object.keys(limits)],
  );
  const bad: string[] = [];
  for (const r of rows) {
    const [counted, live] = [Number(r.counted), Number(r.live)];
    if (live > limits[r.queue]) bad.push(`${r.queue} holds ${live} GPUs, its limit is ${limits[r.queue]}`);
    if (counted !== live) bad.push(`${r.queue} counted ${counted} GPUs, its live ranks hold ${live}`);
  }
  const cohort = rows.reduce((sum, r) => sum + Number(r.live), 0);
  if (cohort > cohortLimit) bad.push(`the cohort holds ${cohort} GPUs, its guarantee is ${cohortLimit}`);
  return { violations: bad, busy: cohort > 0 };
}

async function statesOf(queues: string[]): Promise<Record<string, number>> {
  const rows: Array<{ state: string; n: number }> = await ds.query(`SELECT state, count(*)::int AS n FROM jobs WHERE queue = ANY($1::text[]) GROUP BY state`, [
    queues,
  ]);
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

/** One sample of a Prometheus counter from each process of a service (0 when absent). */
async function metric(service: Parameters<Stack['all']>[0], series: string): Promise<number[]> {
  return Promise.all(
    stack.all(service).map(async (s) => {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return Number(line?.split(' ')[1] ?? 0);
    }),
  );
}

async function cpuSeconds(): Promise<string> {
  const services = ['api-gateway', 'scheduler', 'heartbeat-ingester', 'reconciler', 'node-agent'] as const;
  const parts = await Promise.all(services.map(async (s) => `${s} ${(await metric(s, 'process_cpu_seconds_total')).map((n) => n.toFixed(1)).join('/')}`));
  return parts.join(', ');
}

describe('three scheduler replicas under load', () => {
  it(`places ${JOBS} jobs on ${NODES} nodes without ever over-committing a node, placing a rank twice or sharing a GPU device`, async () => {
    const queues = [uniqueTag('qa'), uniqueTag('qb'), uniqueTag('qc')];
    for (const name of queues) expect((await api.request('POST', '/v1/queues', { name, priority: 10 })).status).toBe(201);
    const started = Date.now();
    const watcher = watch(async () => {
      const capacity = await capacitySnapshot();
      const violations = [...capacity.violations, ...(await placementViolations(queues)), ...(await deviceViolations())];
      return { violations, busy: capacity.busyNodes > 0 };
    });
    let ids: string[] = [];
    let submittedMs = 0;
    let finishedMs = 0;
    let watched = { samples: 0, violations: [] as string[] };
    try {
      ids = await submitAll(jobMix(JOBS, queues, 5), 32);
      submittedMs = Date.now() - started;
      let states: Record<string, number> = {};
      await waitFor(
        `all ${JOBS} jobs ended`,
        async () => {
          states = await statesOf(queues);
          return (states.SUCCEEDED ?? 0) + (states.FAILED ?? 0) + (states.CANCELLED ?? 0) === JOBS;
        },
        { timeoutMs: 150_000, intervalMs: 500, onTimeout: () => `states: ${JSON.stringify(states)}` },
      );
      finishedMs = Date.now() - started;
    } finally {
      watched = await watcher.stop();
      console.log(
        `stress: submitted in ${submittedMs} ms, ended after ${finishedMs} ms; looks at work ${watched.samples}; cpu s: ${await cpuSeconds()}; lost races ${await metric('scheduler', 'gantry_scheduler_placements_total{outcome="lost_race"}')}; placed ${await metric('scheduler', 'gantry_scheduler_placements_total{outcome="placed"}')}`,
      );
    }
    const { samples, violations } = watched;
    expect(await statesOf(queues)).toEqual({ SUCCEEDED: JOBS });

    expect(ids).toHaveLength(JOBS);
    expect(violations).toEqual([]);
    // The watcher looked while work was placed, more than a handful of times. How many looks fit
    // depends on the host: one look took ~3 s on a slow, loaded one (16 looks in 46 s).
    expect(samples).toBeGreaterThanOrEqual(5);
    // Each job was placed once: attempt 1, one QUEUED -> SCHEDULED event, every rank released.
    const [once] = await ds.query(
      `SELECT count(*) FILTER (WHERE j.attempt <> 1)::int AS retried,
         count(*) FILTER (WHERE (SELECT count(*) FROM job_events e WHERE e.job_id = j.id AND e.to_state = 'SCHEDULED') <> 1)::int AS rescheduled,
         (SELECT count(*)::int FROM attempt_nodes a JOIN jobs k ON k.id = a.job_id WHERE k.queue = ANY($1::text[]) AND a.released_at IS NULL) AS unreleased
       FROM jobs j WHERE j.queue = ANY($1::text[])`,
      [queues],
    );
    expect(once).toEqual({ retried: 0, rescheduled: 0, unreleased: 0 });
    // Counters and ranks still agree once everything has been released, and every device is free again.
    expect(await capacityViolations()).toEqual([]);
    expect(await deviceViolations()).toEqual([]);
    const [devices] = await ds.query(
      `SELECT count(*) FILTER (WHERE cardinality(a.gpu_indices) > 0)::int AS with_devices, count(*) FILTER (WHERE a.gpus > 0)::int AS gpu_ranks
       FROM attempt_nodes a JOIN jobs j ON j.id = a.job_id WHERE j.queue = ANY($1::text[])`,
      [queues],
    );
    // Every GPU rank held devices: the check above had something to check.
    expect(devices.with_devices).toBe(devices.gpu_ranks);
    expect(devices.gpu_ranks).toBeGreaterThan(0);
    const [heldAfter] = await ds.query(`SELECT count(*)::int AS n FROM nodes WHERE id LIKE $1 AND cardinality(gpus_held) > 0`, [`${tag}-%`]);
    expect(heldAfter.n).toBe(0);
    // All three replicas took part: the race was real.
    const perReplica = await metric('scheduler', 'gantry_scheduler_placements_total{outcome="placed"}');
    expect(perReplica.every((n) => n > 0)).toBe(true);
  });
});

describe('three scheduler replicas racing for one cohort', () => {
  it('never lets a queue past its guarantee plus borrowing limit, nor the cohort past its guarantees, and counts exactly', async () => {
    // Three children of one parent, each guaranteed 16 GPUs and allowed to borrow 16: the cohort may
    // hold 48 of the fleet's hundreds, so the limits, not the nodes, hold the work back throughout.
    const org = uniqueTag('org');
    expect((await api.request('POST', '/v1/queues', { name: org, priority: 10 })).status).toBe(201);
    const queues = [uniqueTag('ca'), uniqueTag('cb'), uniqueTag('cc')];
    for (const name of queues) {
      const res = await api.request('POST', '/v1/queues', { name, priority: 10, parent: org, quota: { gpus: 16 }, borrowingLimit: { gpus: 16 } });
      expect(res.status).toBe(201);
    }
    const limits = Object.fromEntries(queues.map((q) => [q, 32]));
    const placedBefore = await metric('scheduler', 'gantry_scheduler_placements_total{outcome="placed"}');
    const bodies = jobMix(240, queues, 7).map((b) => ({ ...b, nodes: 1, resources: { ...b.resources, gpus: Math.max(b.resources.gpus, 1) } }));
    // Each look also notes whether some job was waiting for its quota: the limits must have bitten.
    let heldBack = 0;
    const watcher = watch(async () => {
      const seen = await quotaViolations(limits, 48);
      const [w] = await ds.query(`SELECT count(*)::int AS n FROM jobs WHERE queue = ANY($1::text[]) AND pending_reason = 'QUOTA_EXCEEDED'`, [queues]);
      heldBack += w.n > 0 ? 1 : 0;
      return seen;
    });
    let watched = { samples: 0, violations: [] as string[] };
    let states: Record<string, number> = {};
    try {
      await submitAll(bodies, 32);
      await waitFor(
        'every cohort job ended',
        async () => {
          states = await statesOf(queues);
          return states.SUCCEEDED === bodies.length;
        },
        { timeoutMs: 150_000, intervalMs: 500, onTimeout: () => `states: ${JSON.stringify(states)}` },
      );
    } finally {
      watched = await watcher.stop();
      console.log(`cohort race: looks at work ${watched.samples}, with a job held by its quota ${heldBack}`);
    }
    expect(watched.violations).toEqual([]);
    expect(watched.samples).toBeGreaterThanOrEqual(5);
    expect(heldBack).toBeGreaterThan(0);
    expect((await quotaViolations(limits, 48)).violations).toEqual([]);
    // Every replica placed some of the cohort's work: the race was real.
    const placedAfter = await metric('scheduler', 'gantry_scheduler_placements_total{outcome="placed"}');
    expect(placedAfter.every((n, i) => n > placedBefore[i])).toBe(true);
  });
});
