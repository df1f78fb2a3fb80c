import { DataSource } from 'typeorm';
import { Stack, waitFor } from '@gantry/stack';
import { openDataSource, startTestStack } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Contract 5.4's decayed fair share through the real services (ADR 0038): a queue's fairShare in
 * GET /v1/queues/{name}, ownerWeights at the door, and explain's FAIR_SHARE. The stack's simulated
 * H100s (-00000, -00002, 8 GPUs each) are held by one queue's gang; the other queue of the band has
 * large past usage (a fair_share_usage row, as the usage ledger writes it), so its waiting job is told
 * that the first queue is served first.
 */

let stack: Stack;
let api: GatewayClient;
let ds: DataSource;
let tag: string;
const made: string[] = [];

jest.setTimeout(120_000);

beforeAll(async () => {
  const e2e = await startTestStack({ suite: 'fair-share' });
  ({ stack, tag } = e2e);
  api = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  ds = await openDataSource();
});

afterAll(async () => {
  for (const id of made) await api?.request('POST', `/v1/jobs/${id}/cancel`);
  await ds?.destroy();
  await stack?.stop();
});

async function create(body: object) {
  const r = await api.request('POST', '/v1/jobs', body);
  expect(r.status).toBe(201);
  made.push(r.body.id);
  return r.body;
}

const h100 = (queue: string, nodes = 1) => ({
  name: 'fair-share',
  image: 'none',
  queue,
  nodes,
  command: ['sh', '-c', 'sleep 300'],
  labels: { suite: tag },
  resources: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 64 },
});

describe('fair share at the door', () => {
  it.each([
    ['a weight of 0', { alice: 0 }],
    ['a weight past 1000', { alice: 1001 }],
    ['a weight that is not a number', { alice: 'two' }],
    ['an owner that is not one', { 'Not An Owner': 1 }],
    ['a list', [1, 2]],
  ])('refuses ownerWeights with %s: 400 naming the field', async (_n, ownerWeights) => {
    const r = await api.request('POST', '/v1/queues', { name: `fs-bad-${Date.now().toString(36)}`, priority: 1, ownerWeights });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/problem\+json/);
    expect(JSON.stringify(r.body)).toContain('ownerWeights');
  });

  it('keeps ownerWeights, shows them, and clears them with null', async () => {
    const name = `fs-owners-${Date.now().toString(36)}`;
    const created = await api.request('POST', '/v1/queues', { name, priority: 1, ownerWeights: { alice: 3, 'bob.b': 0.5 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      ownerWeights: { alice: 3, 'bob.b': 0.5 },
      fairShare: { share: expect.any(Number), usage: expect.any(Number), factor: expect.any(Number) },
    });
    const cleared = await api.request('PATCH', `/v1/queues/${name}`, { ownerWeights: null });
    expect(cleared.body.ownerWeights).toBeNull();
  });
});

describe('fair share in the queue view and in explain', () => {
  it("shows the band's shares and usage, and tells the queue with the large past that the other is served first", async () => {
    const [n0, n2] = [0, 2].map((i) => `${tag}-${String(i).padStart(5, '0')}`);
    for (const id of [n0, n2]) {
      await waitFor(`${id} healthy`, async () => (await api.request('GET', `/v1/nodes/${id}`)).body.health === 'HEALTHY', {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
    }
    const stamp = Date.now().toString(36);
    const [used, fresh] = [`fs-used-${stamp}`, `fs-fresh-${stamp}`];
    for (const name of [used, fresh]) expect((await api.request('POST', '/v1/queues', { name, priority: 63 })).status).toBe(201);
    // A million GPU-hours, as of now: far more than anything the fresh queue can run up here.
    await ds.query(`INSERT INTO fair_share_usage (queue, owner, gpu_seconds, as_of) VALUES ($1, 'admin', 3.6e9, now())`, [used]);

    const filler = await create(h100(fresh, 2));
    await waitFor('the filler running', async () => (await api.request('GET', `/v1/jobs/${filler.id}`)).body.state === 'RUNNING', {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    const [behind, ahead] = [await create(h100(used)), await create(h100(fresh))];
    for (const j of [behind, ahead]) {
      await waitFor('a pending reason', async () => (await api.request('GET', `/v1/jobs/${j.id}`)).body.pendingReason !== null, {
        timeoutMs: 30_000,
        intervalMs: 100,
      });
    }

    const [u, f] = [(await api.request('GET', `/v1/queues/${used}`)).body.fairShare, (await api.request('GET', `/v1/queues/${fresh}`)).body.fairShare];
    expect(u.share).toBeCloseTo(0.5);
    expect(f.share).toBeCloseTo(0.5);
    expect(u.usage).toBeGreaterThan(0.99);
    expect(u.factor).toBeCloseTo(0.25, 2);
    expect(f.usage).toBeLessThan(0.01);
    expect(f.factor).toBeGreaterThan(0.98);

    const e = (await api.request('GET', `/v1/jobs/${behind.id}/explain`)).body;
    expect(e.blockers.map((b: any) => b.reason)).toEqual(expect.arrayContaining(['INSUFFICIENT_CAPACITY', 'FAIR_SHARE']));
    expect(e.blockers.find((b: any) => b.reason === 'FAIR_SHARE').detail).toMatch(new RegExp(`queue ${fresh} \\(\\d+\\) ahead of queue ${used} \\(1000000\\)`));
    const other = (await api.request('GET', `/v1/jobs/${ahead.id}/explain`)).body;
    expect(other.blockers.map((b: any) => b.reason)).not.toContain('FAIR_SHARE');
  });
});
