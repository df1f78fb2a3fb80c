import { randomUUID } from 'node:crypto';
import { TOPICS } from '@gantry/contracts';
import { Stack, waitFor } from '@gantry/stack';
import { HandAgent, startTestStack, testKafka, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

let stack: Stack;
let admin: GatewayClient;
let user: GatewayClient;
let tag: string;
let hand: HandAgent;

jest.setTimeout(120_000);

beforeAll(async () => {
  const e2e = await startTestStack({ suite: 'nodes' });
  ({ stack, tag } = e2e);
  admin = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  const minted = await admin.request('POST', '/v1/tokens', { owner: uniqueTag('team'), role: 'user' });
  user = new GatewayClient(stack.gatewayUrl, minted.body.token);
  hand = new HandAgent(stack.gatewayUrl, e2e.adminToken);
});

afterAll(async () => {
  await hand?.close();
  await stack?.stop();
});

// The fleet is deterministic (apps/node-agent/src/fleet/fleet-layout.ts): node 0 and 2 are 8 x H100
// with 96 cores, node 1 is 8 x A100 with 64 cores, all in rack 0 of zone-a.
const sim = (i: number) => `${tag}-${String(i).padStart(5, '0')}`;

function beat(nodeId: string, gpuUtil: number[], model: string, cpuUtil: number, zone = 'zone-k') {
  return {
    nodeId,
    bootId: randomUUID(),
    seq: 1,
    sentAt: Date.now(),
    zone,
    rack: 'rk',
    gpus: gpuUtil.map((utilization, index) => ({ index, model, memoryMiB: 1024, memoryUsedMiB: 0, utilization, healthy: true })),
    cpu: { cores: 16, utilization: cpuUtil },
    memory: { totalMiB: 65536, usedMiB: 1 },
    running: [],
  };
}

/** Beats of nodes that are not the simulator's, sent by hand: enrolled, signed. */
async function produce(beats: Array<{ nodeId: string }>) {
  const fresh = beats.map((b) => b.nodeId).filter((id) => !hand.credentials.has(id));
  if (fresh.length > 0) await hand.enroll(...fresh);
  await hand.sendBeats(beats.map((b) => hand.message(b.nodeId, b)));
}

async function listAll(client: GatewayClient, query: string, limit = 500): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const r = await client.request('GET', `/v1/nodes?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(r.status).toBe(200);
    items.push(...r.body.items);
    cursor = r.body.nextCursor;
  } while (cursor);
  return items;
}

describe('nodes API', () => {
  it('registers the fleet on its first beats and shows topology, allocations, health and live telemetry', async () => {
    const node = await waitFor(
      'node 0 with telemetry',
      async () => {
        const r = await user.request('GET', `/v1/nodes/${sim(0)}`);
        return r.status === 200 && r.body.telemetry ? r.body : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(node).toMatchObject({
      id: sim(0),
      zone: 'zone-a',
      rack: `${tag}-r0000`,
      health: 'HEALTHY',
      cordoned: false,
      gpus: { model: 'H100', total: 8, allocated: 0 },
      cpuCores: 96,
      memoryMiB: 1048576,
    });
    expect(Date.now() - Date.parse(node.lastHeartbeatAt)).toBeLessThan(15_000);
    expect(node.telemetry.gpus).toHaveLength(8);
    expect(node.telemetry.cpu).toMatchObject({ cores: 96, utilization: expect.any(Number) });
    // Job ids are for operators (contract §4.3): a user's view has no running set.
    expect(node.telemetry).not.toHaveProperty('running');
    expect((await admin.request('GET', `/v1/nodes/${sim(0)}`)).body.telemetry.running).toEqual(expect.any(Array));
    expect(node.telemetry.telemetryAt).toEqual(expect.any(String));
  });

  it('keeps the last telemetry through liveness beats (ADR 0010): the beat moves on, the telemetry stays', async () => {
    // The simulator sends telemetry on change and every sixth beat; an idle node's drift is small.
    const node = await waitFor(
      'node 0 seen through a liveness beat',
      async () => {
        const r = await user.request('GET', `/v1/nodes/${sim(0)}`);
        const t = r.body?.telemetry;
        return t?.telemetryAt && Date.parse(t.sentAt) > Date.parse(t.telemetryAt) ? r.body : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(node.telemetry.gpus).toHaveLength(8);
    expect(node.telemetry.cpu).toMatchObject({ cores: 96 });
    expect(node.telemetry.memory).toMatchObject({ totalMiB: 1048576 });
  });

  it('lists with filters and filter-bound cursors, each matching node exactly once', async () => {
    // Health is live state; the other suites' nodes are unheard in this suite's Redis db. The
    // ingester's consumer group is shared with the suites before this one on the test broker, so it
    // may first work through their fleets' last beats: wait until this fleet is heard.
    await waitFor(
      'the fleet healthy',
      async () => {
        const views = await Promise.all([0, 1, 2].map(async (i) => (await user.request('GET', `/v1/nodes/${sim(i)}`)).body));
        return views.every((v) => v?.health === 'HEALTHY');
      },
      { timeoutMs: 30_000 },
    );
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const r = await user.request('GET', `/v1/nodes?health=HEALTHY&zone=zone-a&gpuModel=H100&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.items.length).toBeLessThanOrEqual(1);
      pages.push(r.body.items.map((n: any) => n.id));
      cursor = r.body.nextCursor;
      if (pages.length === 1) {
        expect(cursor).not.toBeNull();
        const reused = await user.request('GET', `/v1/nodes?health=HEALTHY&zone=zone-b&limit=1&cursor=${encodeURIComponent(cursor!)}`);
        expect(reused.status).toBe(400);
        const tampered = await user.request('GET', `/v1/nodes?health=HEALTHY&zone=zone-a&gpuModel=H100&limit=1&cursor=${encodeURIComponent(`x${cursor}`)}`);
        expect(tampered.status).toBe(400);
      }
    } while (cursor);
    expect(pages.flat().filter((id) => id.startsWith(tag))).toEqual([sim(0), sim(2)]);
    const a100 = await listAll(user, 'gpuModel=A100&health=HEALTHY');
    expect(a100.map((n) => n.id).filter((id) => id.startsWith(tag))).toEqual([sim(1)]);
    expect((await user.request('GET', '/v1/nodes?health=SICK')).status).toBe(400);
    expect((await user.request('GET', '/v1/nodes?limit=501')).status).toBe(400);
  });

  it('answers 401 without a token, 403 when a user cordons, 404 for an unknown node', async () => {
    const anonymous = new GatewayClient(stack.gatewayUrl, null);
    expect((await anonymous.request('GET', '/v1/nodes')).status).toBe(401);
    expect((await anonymous.request('GET', '/v1/cluster/summary')).status).toBe(401);
    expect((await new GatewayClient(stack.gatewayUrl, 'gnt_nope').request('GET', `/v1/nodes/${sim(0)}`)).status).toBe(401);
    expect((await user.request('POST', `/v1/nodes/${sim(0)}/cordon`)).status).toBe(403);
    expect((await user.request('POST', `/v1/nodes/${sim(0)}/uncordon`)).status).toBe(403);
    expect((await user.request('GET', `/v1/nodes/${sim(0)}`)).body.cordoned).toBe(false);
    const missing = await admin.request('GET', `/v1/nodes/${tag}-nope`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect((await admin.request('POST', `/v1/nodes/${tag}-nope/cordon`)).status).toBe(404);
    expect((await admin.request('POST', `/v1/nodes/${tag}-nope/uncordon`)).status).toBe(404);
  });

  it('a cordoned node gets no new work; uncordoned, the waiting job is placed on it', async () => {
    // Node 1 is the fleet's only A100 node, so a job for 8 A100s can only go there.
    for (let i = 0; i < 2; i++) {
      const r = await admin.request('POST', `/v1/nodes/${sim(1)}/cordon`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ id: sim(1), cordoned: true });
    }
    const job = await admin.request('POST', '/v1/jobs', {
      name: 'needs-a100',
      image: 'none',
      command: ['sh', '-c', 'exit 0'],
      labels: { suite: tag },
      resources: { gpus: 8, gpuModel: 'A100', cpuCores: 1, memoryMiB: 256 },
    });
    expect(job.status).toBe(201);
    const pending = await waitFor(
      'the scheduler to give a pending reason',
      async () => {
        const r = await admin.request('GET', `/v1/jobs/${job.body.id}`);
        return r.body.pendingReason ? r.body : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(pending).toMatchObject({ state: 'QUEUED', attempt: 0 });

    for (let i = 0; i < 2; i++) expect((await admin.request('POST', `/v1/nodes/${sim(1)}/uncordon`)).body.cordoned).toBe(false);
    const done = await waitFor(
      'the job to be placed and end',
      async () => {
        const r = await admin.request('GET', `/v1/jobs/${job.body.id}`);
        return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(r.body.state) ? r.body : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(done).toMatchObject({ state: 'SUCCEEDED', nodeIds: [sim(1)] });
  });

  it('dead-letters a poison heartbeat with its reason and source, while a good one from a new node registers it', async () => {
    const poisonKey = `${tag}-poison`;
    // On the poison's own partition, after it: what is shown is that the partition goes on past it.
    const fresh = HandAgent.nodeIdBesideKey(`${tag}-fresh`, poisonKey);
    const dlq = testKafka('nodes-e2e').rawConsumer({ groupId: uniqueTag('nodes-e2e-dlq') });
    await dlq.connect();
    await dlq.subscribe({ topic: TOPICS.deadLetter, fromBeginning: true });
    const found = new Promise<Record<string, string>>((resolve) => {
      void dlq.run({
        eachMessage: async ({ message }) => {
          if (message.key?.toString() !== poisonKey) return;
          resolve(Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])));
        },
      });
    });
    try {
      await hand.enroll(poisonKey, fresh);
      await hand.sendBeats([hand.message(poisonKey, '{"nodeId": "not json'), hand.message(fresh, beat(fresh, [0.5], 'H100', 0.5))]);
      const headers = await Promise.race([found, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no dead letter within 30 s')), 30_000))]);
      expect(headers).toMatchObject({
        'x-source-topic': TOPICS.heartbeats,
        'x-source-partition': expect.stringMatching(/^\d+$/),
        'x-source-offset': expect.stringMatching(/^\d+$/),
      });
      expect(headers['x-dead-letter-reason'].length).toBeGreaterThan(0);
      const node = await waitFor(
        'the good node to register',
        async () => {
          const r = await admin.request('GET', `/v1/nodes/${fresh}`);
          return r.status === 200 ? r.body : undefined;
        },
        { timeoutMs: 20_000 },
      );
      expect(node).toMatchObject({ health: 'HEALTHY', gpus: { model: 'H100', total: 1 }, zone: 'zone-k' });
    } finally {
      await dlq.disconnect();
    }
    const metrics = await (await fetch(`${stack.get('heartbeat-ingester').url}/metrics`)).text();
    expect(Number(new RegExp(`^gantry_messages_dead_lettered_total\\{topic="${TOPICS.heartbeats}"\\} (\\d+)`, 'm').exec(metrics)?.[1])).toBeGreaterThanOrEqual(
      1,
    );
    expect(metrics).toMatch(/^gantry_heartbeat_ingest_lag_seconds_count [1-9]/m);
  });

  it('sums the summary correctly over a known fleet', async () => {
    // Freeze the simulated fleet so every live node's telemetry stays put while it is compared.
    await stack.get('node-agent').stop();
    const before = await admin.request('GET', '/v1/cluster/summary');
    const [k1, k2] = [`${tag}-known-1`, `${tag}-known-2`];
    // The summary may be up to a second older than a listing, so they agree only while no node
    // crosses a health threshold: the two known nodes keep beating (one boot, growing seq) and the
    // stopped fleet's nodes go on to UNHEALTHY and stay there; then both views hold still.
    const known = [beat(k1, [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], 'H100', 0.25), beat(k2, [1, 1, 1, 1], 'L4', 0.75)];
    await produce(known);
    let beating = true;
    const keepBeating = (async () => {
      while (beating) {
        await new Promise((r) => setTimeout(r, 300));
        for (const b of known) Object.assign(b, { seq: b.seq + 1, sentAt: Date.now() });
        await produce(known);
      }
    })();
    try {
      const gpusOf = (s: any, model: string) => s.gpus.find((g: any) => g.model === model) ?? { total: 0, allocated: 0, free: 0, nodes: 0 };

      await waitFor(
        'the summary to agree with the nodes it covers',
        async () => {
          const s = (await user.request('GET', '/v1/cluster/summary')).body;
          const healthy = await listAll(user, 'health=HEALTHY');
          const degraded = await listAll(user, 'health=DEGRADED');
          if (!healthy.some((n) => n.id === k2) || !healthy.some((n) => n.id === k1)) return undefined;
          if (s.nodesByHealth.HEALTHY !== healthy.length || s.nodesByHealth.DEGRADED !== degraded.length) return undefined;
          // Registration and capacity: the two known nodes added 8 H100 and 4 L4, none allocated.
          if (gpusOf(s, 'H100').total - gpusOf(before.body, 'H100').total !== 8) return undefined;
          if (gpusOf(s, 'L4').total - gpusOf(before.body, 'L4').total !== 4) return undefined;
          const live = [...healthy, ...degraded];
          const gpus = live.flatMap((n) => n.telemetry.gpus);
          const expectedGpu = gpus.reduce((a, g) => a + g.utilization, 0) / gpus.length;
          const expectedCpu = live.reduce((a, n) => a + n.telemetry.cpu.utilization, 0) / live.length;
          expect(s.utilisation.nodes).toBe(live.length);
          expect(s.utilisation.gpu).toBeCloseTo(expectedGpu, 2);
          expect(s.utilisation.cpu).toBeCloseTo(expectedCpu, 2);
          expect(s.nodes).toBe(s.nodesByHealth.HEALTHY + s.nodesByHealth.DEGRADED + s.nodesByHealth.UNHEALTHY);
          for (const g of s.gpus) expect(g.free).toBeLessThanOrEqual(g.total);
          expect(Object.keys(s.jobsByState).sort()).toEqual(['CANCELLED', 'FAILED', 'QUEUED', 'RUNNING', 'SCHEDULED', 'SUCCEEDED']);
          expect(s.jobsByState.SUCCEEDED).toBeGreaterThanOrEqual(1);
          return true;
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );
    } finally {
      beating = false;
      await keepBeating;
    }
  });
});
