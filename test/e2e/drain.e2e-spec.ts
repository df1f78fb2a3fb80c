import { Stack, waitFor } from '@gantry/stack';
import { startTestStack } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Contract §4.7's drain through the real services: the node is cordoned at once, its attempts run
 * on through the grace, then they are ended and requeued (NODE_DRAINED, no retry used: the job has
 * maxRetries 0) and placed elsewhere, and the node records DRAINED with the jobs it ended.
 */

let stack: Stack;
let api: GatewayClient;
let user: GatewayClient;
let tag: string;

jest.setTimeout(120_000);

beforeAll(async () => {
  const e2e = await startTestStack({ suite: 'drain', serviceEnv: { reconciler: { GANTRY_DETECTOR_INTERVAL_MS: '500' } } });
  ({ stack, tag } = e2e);
  api = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  const token = await api.request('POST', '/v1/tokens', { owner: `user-${tag}`, role: 'user' });
  user = new GatewayClient(stack.gatewayUrl, token.body.token);
});

afterAll(async () => {
  await stack?.stop();
});

describe('drain', () => {
  it('cordons now, lets the attempt run through the grace, then requeues it elsewhere without using a retry', async () => {
    const created = (
      await api.request('POST', '/v1/jobs', {
        name: 'drained',
        image: 'none',
        command: ['sh', '-c', 'sleep 300'],
        labels: { suite: tag },
        maxRetries: 0,
        resources: { gpus: 0, cpuCores: 1, memoryMiB: 64 },
      })
    ).body;
    const first = await waitFor(
      'attempt 1 running',
      async () => {
        const r = await api.request('GET', `/v1/jobs/${created.id}`);
        return r.body.state === 'RUNNING' ? r.body : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const node = first.nodeIds[0] as string;

    expect((await user.request('POST', `/v1/nodes/${node}/drain`, { gracePeriodSeconds: 3 })).status).toBe(403);
    expect((await api.request('POST', `/v1/nodes/${node}/drain`, { gracePeriodSeconds: -1 })).status).toBe(400);
    expect((await api.request('POST', `/v1/nodes/${node}/drain`, {})).status).toBe(400);
    const drainedAt = Date.now();
    const drain = await api.request('POST', `/v1/nodes/${node}/drain`, { gracePeriodSeconds: 3 });
    expect(drain.status).toBe(200);
    expect(drain.body.cordoned).toBe(true);
    // Within the grace the attempt goes on.
    expect((await api.request('GET', `/v1/jobs/${created.id}`)).body).toMatchObject({ state: 'RUNNING', attempt: 1 });

    const second = await waitFor(
      'attempt 2 running elsewhere',
      async () => {
        const r = await api.request('GET', `/v1/jobs/${created.id}`);
        return r.body.state === 'RUNNING' && r.body.attempt === 2 ? r.body : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(second.nodeIds[0]).not.toBe(node);

    const events = (await api.request('GET', `/v1/jobs/${created.id}/events`)).body.items;
    const requeued = events.find((e: any) => e.type === 'STATE_CHANGED' && e.toState === 'QUEUED');
    expect(requeued).toMatchObject({ fromState: 'RUNNING', attempt: 1, reason: 'NODE_DRAINED', nodeIds: [node] });
    expect(Date.parse(requeued.at) - drainedAt).toBeGreaterThanOrEqual(3_000);

    const nodeEvents = (await api.request('GET', `/v1/nodes/${node}/events`)).body.items;
    expect(nodeEvents.map((e: any) => e.type)).toEqual(expect.arrayContaining(['CORDONED', 'DRAINED']));
    expect(nodeEvents.find((e: any) => e.type === 'DRAINED')).toMatchObject({ reason: 'NODE_DRAINED', jobIds: [created.id] });
    // The node stays cordoned, and nothing of the old attempt lingers on it.
    await waitFor(
      'the old attempt gone from the node',
      async () => {
        const n = (await api.request('GET', `/v1/nodes/${node}`)).body;
        return n.cordoned === true && (n.telemetry?.running ?? []).every((r: any) => r.jobId !== created.id);
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );

    await api.request('POST', `/v1/jobs/${created.id}/cancel`);
  });
});
