import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack, waitFor } from '@gantry/stack';
import { startTestStack, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Contract §4.7's dependencies through the real services (ADR 0023): a chain A -> B -> C runs in
 * order (each appends its name to a file A's command waits on, so the order is the processes' own),
 * a failed A fails B and C with DEPENDENCY_FAILED, and the caller must be able to see what it names.
 */

let stack: Stack;
let api: GatewayClient;
let user: GatewayClient;
let tag: string;
let work: string;

jest.setTimeout(120_000);

beforeAll(async () => {
  const e2e = await startTestStack({ suite: 'job-dependencies' });
  ({ stack, tag, work } = e2e);
  api = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  const token = await api.request('POST', '/v1/tokens', { owner: `user-${tag}`, role: 'user' });
  expect(token.status).toBe(201);
  user = new GatewayClient(stack.gatewayUrl, token.body.token);
});

afterAll(async () => {
  await stack?.stop();
});

function job(name: string, script: string, extra: object = {}) {
  return { name, image: 'none', command: ['sh', '-c', script], labels: { suite: tag }, resources: { gpus: 0, cpuCores: 1, memoryMiB: 64 }, ...extra };
}

const terminal = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
async function ended(id: string, client = api) {
  return waitFor(
    `job ${id} to end`,
    async () => {
      const r = await client.request('GET', `/v1/jobs/${id}`);
      return terminal.includes(r.body.state) ? r.body : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}

async function create(body: object, client = api) {
  const r = await client.request('POST', '/v1/jobs', body);
  expect(r.status).toBe(201);
  return r.body;
}

describe('dependencies', () => {
  it('runs a chain A -> B -> C in order, each waiting with DEPENDENCY until the one before succeeds', async () => {
    const log = join(work, `chain-${uniqueTag()}`);
    const gate = join(work, `gate-${uniqueTag()}`);
    // A holds until the test opens the gate, so B and C are seen waiting.
    const a = await create(job('a', `while [ ! -e "${gate}" ]; do sleep 0.1; done; echo a >> "${log}"`));
    const b = await create(job('b', `echo b >> "${log}"`, { dependsOn: [{ jobId: a.id, condition: 'succeeded' }] }));
    const c = await create(job('c', `echo c >> "${log}"`, { dependsOn: [{ jobId: b.id, condition: 'succeeded' }] }));
    expect(b).toMatchObject({ state: 'QUEUED', pendingReason: 'DEPENDENCY' });
    expect(c).toMatchObject({ state: 'QUEUED', pendingReason: 'DEPENDENCY' });

    await waitFor('A running', async () => (await api.request('GET', `/v1/jobs/${a.id}`)).body.state === 'RUNNING', { timeoutMs: 30_000, intervalMs: 100 });
    for (const j of [b, c])
      expect((await api.request('GET', `/v1/jobs/${j.id}`)).body).toMatchObject({ state: 'QUEUED', attempt: 0, pendingReason: 'DEPENDENCY' });
    writeFileSync(gate, '');

    const done = [await ended(a.id), await ended(b.id), await ended(c.id)];
    expect(done.map((j) => j.state)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(readFileSync(log, 'utf8').split('\n').filter(Boolean)).toEqual(['a', 'b', 'c']);
    // Each started after the one before finished.
    expect(Date.parse(done[1].startedAt)).toBeGreaterThanOrEqual(Date.parse(done[0].finishedAt));
    expect(Date.parse(done[2].startedAt)).toBeGreaterThanOrEqual(Date.parse(done[1].finishedAt));
  });

  it('a failed A fails B and C with DEPENDENCY_FAILED, and a "finished" dependent still runs', async () => {
    const a = await create(job('a', 'sleep 0.5; exit 1'));
    const b = await create(job('b', 'true', { dependsOn: [{ jobId: a.id, condition: 'succeeded' }] }));
    const c = await create(job('c', 'true', { dependsOn: [{ jobId: b.id, condition: 'succeeded' }] }));
    const cleanup = await create(job('cleanup', 'true', { dependsOn: [{ jobId: a.id, condition: 'finished' }] }));
    expect(await ended(a.id)).toMatchObject({ state: 'FAILED', exitCode: 1 });
    for (const j of [b, c]) expect(await ended(j.id)).toMatchObject({ state: 'FAILED', reason: 'DEPENDENCY_FAILED', attempt: 0 });
    expect(await ended(cleanup.id)).toMatchObject({ state: 'SUCCEEDED', attempt: 1 });
    const events = (await api.request('GET', `/v1/jobs/${c.id}/events`)).body.items;
    expect(events.map((e: any) => [e.type, e.toState, e.reason ?? null])).toEqual([
      ['CREATED', 'QUEUED', null],
      ['STATE_CHANGED', 'FAILED', `DEPENDENCY_FAILED: job ${b.id} ended FAILED`],
    ]);
  });

  it('the job resource shows what it depends on: on create, get, list and cancel', async () => {
    const x = await create(job('x', 'sleep 30'), user);
    const y = await create(job('y', 'sleep 30'), user);
    const d = await create(
      job('d', 'true', {
        dependsOn: [
          { jobId: y.id.toUpperCase(), condition: 'finished' },
          { jobId: x.id, condition: 'succeeded' },
        ],
      }),
      user,
    );
    // Upstream job id ascending, in lower case, whatever the order and case they were named in.
    const expected = [
      { jobId: x.id, condition: 'succeeded' },
      { jobId: y.id, condition: 'finished' },
    ].sort((p, q) => p.jobId.localeCompare(q.jobId));
    expect(d.dependsOn).toEqual(expected);
    expect((await user.request('GET', `/v1/jobs/${d.id}`)).body.dependsOn).toEqual(expected);
    expect((await user.request('GET', `/v1/jobs/${x.id}`)).body.dependsOn).toEqual([]);
    const listed = (await user.request('GET', '/v1/jobs?limit=500')).body.items;
    expect(listed.find((j: any) => j.id === d.id).dependsOn).toEqual(expected);
    expect(listed.find((j: any) => j.id === y.id).dependsOn).toEqual([]);
    for (const j of [d, x, y]) {
      const r = await user.request('POST', `/v1/jobs/${j.id}/cancel`);
      expect(r.body.dependsOn).toEqual(j.id === d.id ? expected : []);
    }
  });

  it('refuses (422) a dependency on a job the caller cannot see, or one that can never be met; 400 for a bad list', async () => {
    const others = await create(job('admins', 'true'));
    const hidden = await user.request('POST', '/v1/jobs', job('x', 'true', { dependsOn: [{ jobId: others.id, condition: 'finished' }] }));
    expect(hidden.status).toBe(422);
    expect(hidden.body.errors).toEqual([expect.objectContaining({ field: 'dependsOn[0].jobId' })]);
    const missing = await user.request(
      'POST',
      '/v1/jobs',
      job('x', 'true', { dependsOn: [{ jobId: '00000000-0000-4000-8000-000000000000', condition: 'finished' }] }),
    );
    expect(missing.status).toBe(422);

    const failed = await create(job('fails', 'exit 2'), user);
    await ended(failed.id, user);
    const never = await user.request('POST', '/v1/jobs', job('x', 'true', { dependsOn: [{ jobId: failed.id, condition: 'succeeded' }] }));
    expect(never.status).toBe(422);
    expect(never.body.detail).toContain('can never be met');

    for (const dependsOn of [
      [{ jobId: failed.id, condition: 'afterok' }],
      [{ jobId: 'not-a-uuid', condition: 'finished' }],
      [
        { jobId: failed.id, condition: 'finished' },
        { jobId: failed.id, condition: 'succeeded' },
      ],
      Array.from({ length: 33 }, () => ({ jobId: failed.id, condition: 'finished' })),
    ]) {
      const r = await user.request('POST', '/v1/jobs', job('x', 'true', { dependsOn }));
      expect(r.status).toBe(400);
    }
  });
});
