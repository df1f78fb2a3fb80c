import { DataSource } from 'typeorm';
import { Stack, waitFor } from '@gantry/stack';
import { openDataSource, startTestStack, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

// Six simulated nodes (apps/node-agent/src/fleet/fleet-layout.ts): nodes 0, 2, 4 and 5 are 8 x H100,
// node 1 is 8 x A100, node 3 is 4 x L4, all in one rack. Jobs below ask for H100, so the four H100
// nodes (32 GPUs) are the capacity they compete for. Two schedulers race over them.
let stack: Stack;
let api: GatewayClient;
let ds: DataSource;
let tag: string;

jest.setTimeout(120_000);

beforeAll(async () => {
  const e2e = await startTestStack({
    suite: 'scheduling-policy',
    simNodes: 6,
    replicas: { scheduler: 2 },
    agentEnv: { GANTRY_SIM_EXECUTOR: 'sleep' },
  });
  ({ stack, tag } = e2e);
  api = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  ds = await openDataSource();
  await waitFor(
    'fleet registered',
    async () => {
      const [r] = await ds.query(`SELECT count(*)::int AS n FROM nodes WHERE id LIKE $1`, [`${tag}-%`]);
      return r.n === 6;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
});

afterAll(async () => {
  await ds?.destroy();
  await stack?.stop();
});

function h100Job(queue: string, nodes: number, gpus: number, durationMs: number) {
  return {
    queue,
    name: 'policy',
    image: 'none',
    command: ['true'],
    nodes,
    labels: { suite: tag },
    env: { SIM_DURATION_MS: String(durationMs) },
    resources: { gpus, gpuModel: 'H100', cpuCores: 4, memoryMiB: 4096 },
  };
}

async function submit(body: object): Promise<string> {
  const res = await api.request('POST', '/v1/jobs', body);
  expect(res.status).toBe(201);
  return res.body.id;
}

async function job(id: string): Promise<any> {
  return (await api.request('GET', `/v1/jobs/${id}`)).body;
}

async function untilEnded(ids: string[], timeoutMs = 60_000): Promise<any[]> {
  return waitFor(
    `jobs ${ids.join(', ')} ended`,
    async () => {
      const jobs = await Promise.all(ids.map(job));
      return jobs.every((j) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.state)) ? jobs : undefined;
    },
    { timeoutMs, intervalMs: 200 },
  );
}

async function scheduledAt(id: string): Promise<number> {
  const events = (await api.request('GET', `/v1/jobs/${id}/events`)).body.items;
  return Date.parse(events.find((e: any) => e.toState === 'SCHEDULED').at);
}

describe('competing gangs', () => {
  it('two gangs that together exceed capacity: never a partial placement, no deadlock, one after the other', async () => {
    // 3 nodes x 8 GPUs each: either fits the four H100 nodes alone, both need six.
    const bodies = [h100Job('default', 3, 8, 2000), h100Job('default', 3, 8, 2000)];
    const partial: string[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        // One statement, one snapshot: an attempt has all its ranks from the moment it exists (ranks
        // are released one by one as they report, so live ranks alone may dwindle at the end).
        const rows: Array<{ job_id: string; live: number; nodes: number; released: number }> = await ds.query(
          `SELECT a.job_id, count(*) FILTER (WHERE a.released_at IS NULL)::int AS live,
             count(*) FILTER (WHERE a.released_at IS NOT NULL)::int AS released, j.nodes
           FROM attempt_nodes a JOIN jobs j ON j.id = a.job_id
           WHERE a.node_id LIKE $1 AND j.labels->>'suite' = $2 GROUP BY a.job_id, a.attempt, j.nodes`,
          [`${tag}-%`, tag],
        );
        for (const r of rows) if (r.live + r.released !== r.nodes) partial.push(JSON.stringify(r));
        await new Promise((r) => setTimeout(r, 20)); // pacing between snapshots
      }
    })();
    let ids: string[] = [];
    try {
      ids = await Promise.all(bodies.map(submit));
      const ended = await untilEnded(ids);
      expect(ended.map((j) => [j.state, j.attempt])).toEqual([
        ['SUCCEEDED', 1],
        ['SUCCEEDED', 1],
      ]);
    } finally {
      watching = false;
      await watcher;
    }
    expect(partial).toEqual([]);
    // The second could only be placed on nodes the first had given back: with four H100 nodes, at
    // least two of the first's three, each released before the second took it.
    const ranks: Array<{ job_id: string; node_id: string; created_at: Date; released_at: Date | null }> = await ds.query(
      `SELECT job_id, node_id, created_at, released_at FROM attempt_nodes WHERE job_id = ANY($1::uuid[]) ORDER BY created_at`,
      [ids],
    );
    const firstId = ranks[0].job_id;
    const firstRanks = new Map(ranks.filter((r) => r.job_id === firstId).map((r) => [r.node_id, r]));
    const secondRanks = ranks.filter((r) => r.job_id !== firstId);
    expect([firstRanks.size, secondRanks.length]).toEqual([3, 3]);
    const reused = secondRanks.filter((r) => firstRanks.has(r.node_id));
    expect(reused.length).toBeGreaterThanOrEqual(2);
    for (const r of reused) expect(r.created_at.getTime()).toBeGreaterThanOrEqual(firstRanks.get(r.node_id)!.released_at!.getTime());
  });
});

describe('priority and reservations', () => {
  it('a lower-band job that fits is held with PRIORITY while a higher-band gang waits for the capacity, and starts after it', async () => {
    const high = uniqueTag('high');
    const low = uniqueTag('low');
    expect((await api.request('POST', '/v1/queues', { name: high, priority: 60 })).status).toBe(201);
    expect((await api.request('POST', '/v1/queues', { name: low, priority: 20 })).status).toBe(201);

    // Half of every H100 node is busy for a while.
    const filler = await submit(h100Job(low, 4, 4, 6000));
    await waitFor('filler placed', async () => (await job(filler)).state !== 'QUEUED', { timeoutMs: 15_000 });
    // The high band wants all four nodes whole; the low job would fit in what is free today.
    const big = await submit(h100Job(high, 4, 8, 1000));
    const small = await submit(h100Job(low, 1, 2, 500));

    const held = await waitFor(
      'small held with PRIORITY',
      async () => {
        // small first: both reasons are written by one statement, so once small's is seen, big's is too.
        const s = await job(small);
        const b = await job(big);
        return s.pendingReason === 'PRIORITY' ? { b, s } : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    expect(held.s.state).toBe('QUEUED');
    expect(held.b).toMatchObject({ state: 'QUEUED', pendingReason: 'INSUFFICIENT_CAPACITY:gpus' });

    const ended = await untilEnded([filler, big, small]);
    expect(ended.map((j) => j.state)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    // Without the reservation the small job would have backfilled at once and gone first.
    expect(await scheduledAt(big)).toBeLessThanOrEqual(await scheduledAt(small));
  });
});

describe('queue weights', () => {
  it('a queue has a weight: 1 by default, set on create, changed by PATCH, shown on read', async () => {
    const plain = uniqueTag('w');
    const heavy = uniqueTag('w');
    expect((await api.request('POST', '/v1/queues', { name: plain, priority: 5 })).body).toMatchObject({ name: plain, weight: 1 });
    expect((await api.request('POST', '/v1/queues', { name: heavy, priority: 5, weight: 2.5 })).body).toMatchObject({ name: heavy, weight: 2.5 });
    const patched = await api.request('PATCH', `/v1/queues/${heavy}`, { weight: 4 });
    expect(patched.body).toMatchObject({ weight: 4, priority: 5 });
    expect((await api.request('PATCH', `/v1/queues/${heavy}`, { priority: 6 })).body).toMatchObject({ weight: 4, priority: 6 });
    expect((await api.request('GET', `/v1/queues/${heavy}`)).body.weight).toBe(4);
  });

  it.each([[0], [-1], ['2'], [1001]])('rejects weight %j with a 400 naming the field', async (weight) => {
    const res = await api.request('POST', '/v1/queues', { name: uniqueTag('w'), priority: 5, weight });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.field)).toContain('weight');
  });
});
