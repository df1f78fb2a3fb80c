import { Stack, waitFor } from '@gantry/stack';
import { startTestStack } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Contract §4.7's explain through the real services (ADR 0024). The stack's three simulated nodes
 * are two 8-GPU H100s (-00000, -00002) and an 8-GPU A100 (-00001). A filler holds H100 -00000 and
 * its queue's whole 8-GPU quota; H100 -00002 is cordoned. A second 8-GPU H100 job of that queue is
 * then blocked three ways at once, and explain must list all three.
 */

let stack: Stack;
let api: GatewayClient;
let tag: string;
/** Jobs this suite made, cancelled at the end so that none is left queued or running in the shared database. */
const made: string[] = [];

jest.setTimeout(120_000);

beforeAll(async () => {
  const e2e = await startTestStack({ suite: 'explain' });
  ({ stack, tag } = e2e);
  api = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
});

afterAll(async () => {
  for (const id of made) await api?.request('POST', `/v1/jobs/${id}/cancel`);
  await stack?.stop();
});

async function create(body: object) {
  const r = await api.request('POST', '/v1/jobs', body);
  expect(r.status).toBe(201);
  made.push(r.body.id);
  return r.body;
}

const h100 = (queue: string, extra: object = {}) => ({
  name: 'explain',
  image: 'none',
  queue,
  command: ['sh', '-c', 'sleep 300'],
  labels: { suite: tag },
  resources: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 64 },
  ...extra,
});

describe('explain', () => {
  it('lists quota, capacity and a cordoned node as blockers, with deficits, counterfactuals and an estimated start', async () => {
    const [n0, n1, n2] = [0, 1, 2].map((i) => `${tag}-${String(i).padStart(5, '0')}`);
    for (const [id, model] of [
      [n0, 'H100'],
      [n1, 'A100'],
      [n2, 'H100'],
    ]) {
      await waitFor(
        `${id} healthy`,
        async () => {
          const r = await api.request('GET', `/v1/nodes/${id}`);
          return r.status === 200 && r.body.health === 'HEALTHY' && r.body.gpus.model === model;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
    }
    // The top band: no queued job of another suite (the database is shared) is ahead of this one's.
    const queue = `explain-${Date.now().toString(36)}`;
    expect((await api.request('POST', '/v1/queues', { name: queue, priority: 100, quota: { gpus: 8 } })).status).toBe(201);
    expect((await api.request('POST', `/v1/nodes/${n2}/cordon`)).status).toBe(200);

    const filler = await create(h100(queue, { maxRuntimeSeconds: 600 }));
    const running = await waitFor(
      'the filler running',
      async () => {
        const r = await api.request('GET', `/v1/jobs/${filler.id}`);
        return r.body.state === 'RUNNING' ? r.body : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(running.nodeIds).toEqual([n0]);
    expect((await api.request('GET', `/v1/jobs/${filler.id}/explain`)).status).toBe(409);

    const blocked = await create(h100(queue));
    // Wait for the scheduler to have looked at it once.
    await waitFor('a pending reason', async () => (await api.request('GET', `/v1/jobs/${blocked.id}`)).body.pendingReason !== null, {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    const r = await api.request('GET', `/v1/jobs/${blocked.id}/explain`);
    expect(r.status).toBe(200);
    const reasons = r.body.blockers.map((b: any) => b.reason);
    expect(reasons).toEqual(expect.arrayContaining(['QUOTA_EXCEEDED', 'INSUFFICIENT_CAPACITY', 'NODES_CORDONED']));
    expect(r.body.blockers.find((b: any) => b.reason === 'QUOTA_EXCEEDED').deficit).toEqual({ gpus: 8, cpuCores: 0, memoryMiB: 0 });
    expect(r.body.blockers.find((b: any) => b.reason === 'INSUFFICIENT_CAPACITY').deficit.gpus).toBe(8);
    expect(r.body.position).toEqual({ queue: 1, overall: expect.any(Number) });
    // No single change lifts both the quota and the capacity.
    expect(r.body.wouldStartWith).toEqual([]);
    // The filler must end by its start + 600 s, giving back its node and its quota.
    expect(Math.abs(Date.parse(r.body.estimatedStartAt) - (Date.parse(running.startedAt) + 600_000))).toBeLessThan(2_000);

    // The same job in a queue without a quota: uncordoning the free H100, or the free A100, would do.
    const other = await create(h100('default'));
    const o = (await api.request('GET', `/v1/jobs/${other.id}/explain`)).body;
    expect(o.blockers.map((b: any) => b.reason)).not.toContain('QUOTA_EXCEEDED');
    expect(o.wouldStartWith).toEqual(
      expect.arrayContaining([
        { change: 'ANOTHER_MODEL', detail: 'gpuModel A100' },
        { change: 'UNCORDON_NODE', detail: `uncordon node ${n2}` },
      ]),
    );
    // The blocked job is ahead of it (a higher band): when the filler ends, that one takes the
    // H100 and, without a maxRuntimeSeconds, never gives it back as far as anyone can know.
    expect(o.position.overall).toBeGreaterThan(r.body.position.overall);
    expect(o.estimatedStartAt).toBeNull();

    expect((await api.request('GET', '/v1/jobs/00000000-0000-4000-8000-000000000000/explain')).status).toBe(404);
  });
});
