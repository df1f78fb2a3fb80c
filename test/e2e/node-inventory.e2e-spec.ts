import { Server, Socket, createServer } from 'node:net';
import { Stack, waitFor } from '@gantry/stack';
import { HandAgent, TestStack, metricValue, startTestStack, testSuite } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * A node is trusted for what an operator declared (contract §5.2, ADR 0035), tried from outside
 * with nodes driven by hand: a node that reports more GPUs than it was declared with gets no more
 * work than declared (and is counted), an operator's PATCH changes what it gets, a node enrolled
 * without an inventory is held to its first report, and the gateway reads a node's logs only at
 * its pinned address, never at one it reports.
 */
let e2e: TestStack;
let stack: Stack;
let admin: GatewayClient;
let hand: HandAgent;
let tag: string;
const beating: NodeJS.Timeout[] = [];
/** Where the log test's listeners sit: the suite's range, above the services. */
const LOGS_PORT = testSuite('node-inventory').basePort + 15;

jest.setTimeout(180_000);

beforeAll(async () => {
  e2e = await startTestStack({ suite: 'node-inventory', simNodes: 1 });
  ({ stack, tag } = e2e);
  admin = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  hand = new HandAgent(stack.gatewayUrl, e2e.adminToken);
});

afterAll(async () => {
  for (const t of beating) clearInterval(t);
  await hand?.close();
  await stack?.stop();
});

interface Hardware {
  model: string;
  gpus: number;
  cpuCores?: number;
  memoryMiB?: number;
  address?: string;
  logsPort?: number;
}

/**
 * Beats for `nodeId` every second with what `hardware()` says now (telemetry in every beat), running
 * nothing: a node that reports what the test makes it report. Resolves once the node is registered.
 */
async function beatAs(nodeId: string, hardware: () => Hardware): Promise<void> {
  let seq = 0;
  const send = () => {
    const h = hardware();
    return hand.sendBeats([
      hand.message(nodeId, {
        nodeId,
        bootId: `${nodeId}-boot`,
        seq: ++seq,
        sentAt: Date.now(),
        zone: 'zone-i',
        rack: `rack-${tag}`,
        gpus: Array.from({ length: h.gpus }, (_, index) => ({ index, model: h.model, memoryMiB: 81920, memoryUsedMiB: 0, utilization: 0, healthy: true })),
        cpu: { cores: h.cpuCores ?? 64, utilization: 0.1 },
        memory: { totalMiB: h.memoryMiB ?? 1_048_576, usedMiB: 1 },
        running: [],
        ...(h.address ? { address: h.address } : {}),
        ...(h.logsPort ? { logsPort: h.logsPort } : {}),
      }),
    ]);
  };
  await send();
  beating.push(setInterval(() => void send().catch(() => undefined), 1000));
  await waitFor(`node ${nodeId} registered`, async () => (await admin.request('GET', `/v1/nodes/${nodeId}`)).status === 200, { timeoutMs: 60_000 });
}

const node = async (id: string) => (await admin.request('GET', `/v1/nodes/${id}`)).body;

async function submitFor(model: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = await admin.request('POST', '/v1/jobs', {
      name: `inv-${i}`,
      image: 'none',
      command: ['true'],
      labels: { suite: tag },
      resources: { gpus: 1, gpuModel: model, cpuCores: 1, memoryMiB: 64 },
    });
    expect(r.status).toBe(201);
    ids.push(r.body.id);
  }
  return ids;
}

/**
 * How many of `ids` are placed, once the scheduler has had its say on every one: each is placed or
 * waits with a pending reason that names a capacity it lacks (a cycle looked at it and decided).
 */
async function placedOnceDecided(ids: string[], expected: number): Promise<{ placed: number; nodes: string[] }> {
  return waitFor(
    `${expected} of ${ids.length} jobs placed, the rest waiting for capacity`,
    async () => {
      const jobs = await Promise.all(ids.map(async (id) => (await admin.request('GET', `/v1/jobs/${id}`)).body));
      const placed = jobs.filter((j) => j.state !== 'QUEUED');
      const decided = jobs.every((j) => j.state !== 'QUEUED' || String(j.pendingReason ?? '').startsWith('INSUFFICIENT_CAPACITY'));
      return decided && placed.length >= expected ? { placed: placed.length, nodes: [...new Set(placed.flatMap((j) => j.nodeIds))] as string[] } : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}

describe('declared inventory', () => {
  it("a node reporting more GPUs than declared gets no more work than declared, is counted, and an operator's PATCH changes what it gets", async () => {
    const ingester = stack.get('heartbeat-ingester').url;
    const exceededBefore = await metricValue(ingester, 'gantry_node_inventory_exceeded_total{resource="gpus"}');
    const liar = `${tag}-liar`;
    const model = `LIAR-${tag}`;
    await hand.enrollWith({ gpus: { model, count: 2 }, cpuCores: 32, memoryMiB: 65536 }, liar);
    await beatAs(liar, () => ({ model, gpus: 8 }));

    const seen = await waitFor(
      'the report recorded',
      async () => {
        const n = await node(liar);
        return n.exceeded?.includes('gpus') ? n : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(seen.declared).toEqual({ gpus: { model, count: 2 }, cpuCores: 32, memoryMiB: 65536, address: null });
    expect(seen.exceeded).toEqual(['gpus', 'cpuCores', 'memoryMiB']);
    expect(seen.telemetry.gpus).toHaveLength(8); // shown as reported
    await waitFor('the metric moved', async () => (await metricValue(ingester, 'gantry_node_inventory_exceeded_total{resource="gpus"}')) > exceededBefore, {
      timeoutMs: 10_000,
    });

    // Six one-GPU jobs only it could run: two are placed, four wait for capacity it does not have.
    const jobs = await submitFor(model, 6);
    expect(await placedOnceDecided(jobs, 2)).toEqual({ placed: 2, nodes: [liar] });
    expect(await node(liar)).toMatchObject({ gpus: { model, total: 2, allocated: 2 }, cpuCores: 32, memoryMiB: 65536 });

    // Not an operator: refused, nothing changed.
    const { token } = await e2e.admin.createToken(
      `team-${tag}`
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '')
        .slice(0, 40),
      'user',
    );
    const user = new GatewayClient(stack.gatewayUrl, token);
    expect((await user.request('PATCH', `/v1/nodes/${liar}`, { declared: { gpus: { model, count: 8 } } })).status).toBe(403);

    const patched = await admin.request('PATCH', `/v1/nodes/${liar}`, { declared: { gpus: { model, count: 4 } } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ gpus: { model, total: 4 }, declared: { gpus: { model, count: 4 }, cpuCores: 32, memoryMiB: 65536 } });
    expect(await placedOnceDecided(jobs, 4)).toEqual({ placed: 4, nodes: [liar] });

    const audit = await admin.request('GET', '/v1/audit?limit=500');
    expect(audit.body.items.some((e: { action: string; target: string }) => e.action === 'nodes.update' && e.target === liar)).toBe(true);
    for (const id of jobs) await admin.request('POST', `/v1/jobs/${id}/cancel`);
  });

  it('the simulated fleet declares its nodes as they are when it enrolls them, so they are believed whole', async () => {
    const sim = await waitFor(
      'the simulated node',
      async () => {
        const n = await node(`${tag}-00000`);
        return n.declared ? n : undefined;
      },
      { timeoutMs: 30_000 },
    );
    // Node 0 of a fleet is an 8-GPU H100 node (fleet-layout.ts).
    expect(sim).toMatchObject({
      declared: { gpus: { model: 'H100', count: 8 }, cpuCores: 96, memoryMiB: 1_048_576, address: '127.0.0.1' },
      gpus: { total: 8 },
      exceeded: [],
    });
  });

  it('without a declaration the first report is pinned; enrolling again with an inventory replaces it', async () => {
    const tofu = `${tag}-tofu`;
    const model = `TOFU-${tag}`;
    let gpus = 2;
    await hand.enroll(tofu);
    await beatAs(tofu, () => ({ model, gpus }));
    expect(await waitFor('pinned', async () => (await node(tofu)).declared ?? undefined, { timeoutMs: 30_000 })).toMatchObject({
      gpus: { model, count: 2 },
      cpuCores: 64,
    });

    gpus = 8;
    const grown = await waitFor(
      'the larger report recorded',
      async () => {
        const n = await node(tofu);
        return n.exceeded?.includes('gpus') ? n : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(grown.gpus.total).toBe(2);

    await hand.enrollWith({ gpus: { model, count: 8 }, cpuCores: 64, memoryMiB: 1_048_576 }, tofu);
    expect(await node(tofu)).toMatchObject({ gpus: { total: 8 }, declared: { gpus: { count: 8 } }, exceeded: [] });
  });

  it('refuses a bad inventory or patch with a 400 that names the field, and changes nothing', async () => {
    const id = `${tag}-strict`;
    const model = `STRICT-${tag}`;
    await hand.enrollWith({ gpus: { model, count: 1 }, cpuCores: 4, memoryMiB: 4096 }, id);
    await beatAs(id, () => ({ model, gpus: 1 }));
    const before = await waitFor('declared', async () => (await node(id)).declared ?? undefined, { timeoutMs: 30_000 });
    const cases: Array<[string, string, object]> = [
      ['POST', `/v1/nodes/${id}/enrollment`, { inventory: { gpus: { model, count: 65 }, cpuCores: 4, memoryMiB: 4096 } }],
      ['POST', `/v1/nodes/${id}/enrollment`, { inventory: { cpuCores: 4 } }],
      ['POST', `/v1/nodes/${id}/enrollment`, { inventory: { cpuCores: 4, memoryMiB: 4096, address: 'http://169.254.169.254/' } }],
      ['POST', '/v1/nodes/enrollments', { nodeIds: [id], inventory: { cpuCores: -1, memoryMiB: 4096 } }],
      ['POST', '/v1/nodes/enrollments', { nodeIds: [id], inventory: { cpuCores: 4, memoryMiB: 4096, extra: 1 } }],
      ['PATCH', `/v1/nodes/${id}`, { declared: { gpus: { model: 'a\u0000b', count: 1 } } }],
      ['PATCH', `/v1/nodes/${id}`, { declared: { memoryMiB: 2 ** 41 } }],
      ['PATCH', `/v1/nodes/${id}`, {}],
    ];
    for (const [method, path, body] of cases) {
      const r = await admin.request(method, path, body);
      expect({ method, path, body, status: r.status, type: r.headers.get('content-type') }).toEqual({
        method,
        path,
        body,
        status: 400,
        type: expect.stringContaining('application/problem+json'),
      });
      expect(r.body.errors?.length ?? 0).toBeGreaterThan(0);
    }
    expect((await admin.request('PATCH', `/v1/nodes/${tag}-nobody`, { declared: { cpuCores: 1 } })).status).toBe(404);
    const after = await node(id);
    expect(after.declared).toEqual(before);
  });
});

/** A TCP listener that records each connection and answers every request with 404. */
async function listener(host: string, port: number): Promise<{ server: Server; requests: string[]; connections: () => number }> {
  const requests: string[] = [];
  let connections = 0;
  const server = createServer((socket: Socket) => {
    connections++;
    let head = '';
    socket.on('data', (d) => {
      head += d.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        requests.push(head.split('\r\n')[0]);
        socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, () => resolve()));
  return { server, requests, connections: () => connections };
}

describe('the log relay', () => {
  it('dials a node only at its pinned address, never at one it reports', async () => {
    const pinned = await listener('127.0.0.1', LOGS_PORT);
    const reported = await listener('127.0.0.2', LOGS_PORT);
    try {
      const id = `${tag}-elsewhere`;
      const model = `ELSEWHERE-${tag}`;
      await hand.enrollWith({ gpus: { model, count: 1 }, cpuCores: 4, memoryMiB: 4096, address: '127.0.0.1' }, id);
      await beatAs(id, () => ({ model, gpus: 1, cpuCores: 4, memoryMiB: 4096, address: '127.0.0.2', logsPort: LOGS_PORT }));
      const seen = await waitFor(
        'its address reported',
        async () => {
          const n = await node(id);
          return n.exceeded?.includes('address') ? n : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect(seen.declared.address).toBe('127.0.0.1');

      const [job] = await submitFor(model, 1);
      await placedOnceDecided([job], 1);
      const logs = await admin.request('GET', `/v1/jobs/${job}/logs`);
      // The "agent" at the pinned address answered 404: no such log there.
      expect(logs.status).toBe(404);
      expect(pinned.requests).toEqual([expect.stringMatching(new RegExp(`^GET /v1/logs/${job}/1\\?`))]);
      expect(reported.connections()).toBe(0);
      await admin.request('POST', `/v1/jobs/${job}/cancel`);
    } finally {
      await new Promise((r) => pinned.server.close(r));
      await new Promise((r) => reported.server.close(r));
    }
  });
});
