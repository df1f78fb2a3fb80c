import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack, waitFor } from '@gantry/stack';
import { jobProcesses, startTestStack, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

let stack: Stack;
let api: GatewayClient;
let tag: string;
let work: string;

jest.setTimeout(120_000);

beforeAll(async () => {
  // The scheduler's periodic tick is ten minutes here: every placement in this suite after the
  // first cycle happens because something woke the scheduler (a create, freed capacity, an uncordon).
  const e2e = await startTestStack({ suite: 'job-lifecycle', serviceEnv: { scheduler: { GANTRY_SCHEDULER_INTERVAL_MS: '600000' } } });
  ({ stack, tag, work } = e2e);
  api = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
});

afterAll(async () => {
  await stack?.stop();
});

function jobBody(command: string[], extra: object = {}) {
  return { name: 'e2e', image: 'none', command, labels: { suite: tag }, resources: { gpus: 0, cpuCores: 1, memoryMiB: 256 }, ...extra };
}

async function waitForState(id: string, states: string[], timeoutMs = 30_000) {
  return waitFor(
    `job ${id} in ${states.join('|')}`,
    async () => {
      const r = await api.request('GET', `/v1/jobs/${id}`);
      return states.includes(r.body.state) ? r.body : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

describe('a job through the real services', () => {
  it('runs a command for real and goes QUEUED -> SCHEDULED -> RUNNING -> SUCCEEDED', async () => {
    const marker = join(work, `ran-${uniqueTag()}`);
    const traceId = randomBytes(16).toString('hex');
    const created = await api.request('POST', '/v1/jobs', jobBody(['sh', '-c', 'echo "rank=$GANTRY_GANG_RANK" > "$MARKER"'], { env: { MARKER: marker } }), {
      traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/v1/jobs/${created.body.id}`);
    expect(created.body).toMatchObject({ state: 'QUEUED', attempt: 0, owner: 'admin', cancelRequested: false });

    const done = await waitForState(created.body.id, ['SUCCEEDED', 'FAILED', 'CANCELLED']);
    expect(done).toMatchObject({ state: 'SUCCEEDED', exitCode: 0, attempt: 1 });
    expect(readFileSync(marker, 'utf8').trim()).toBe('rank=0');
    expect(done.nodeIds[0]).toMatch(new RegExp(`^${tag}-`));

    const events = await api.request('GET', `/v1/jobs/${created.body.id}/events`);
    expect(events.body.items.map((e: any) => [e.seq, e.type, e.fromState ?? null, e.toState])).toEqual([
      [1, 'CREATED', null, 'QUEUED'],
      [2, 'STATE_CHANGED', 'QUEUED', 'SCHEDULED'],
      [3, 'STATE_CHANGED', 'SCHEDULED', 'RUNNING'],
      [4, 'STATE_CHANGED', 'RUNNING', 'SUCCEEDED'],
    ]);
    expect(events.body.nextCursor).toBeNull();

    // One trace from the POST, through the outbox and Kafka, to the agent that ran it.
    const agentLog = readFileSync(stack.get('node-agent').logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes(created.body.id));
    expect(agentLog.map((l) => JSON.parse(l)).find((l) => l.type === 'RUN')).toMatchObject({ traceId });
  });

  it('reports a failing command as FAILED with its exit code', async () => {
    const created = await api.request('POST', '/v1/jobs', jobBody(['sh', '-c', 'exit 3']));
    const done = await waitForState(created.body.id, ['SUCCEEDED', 'FAILED', 'CANCELLED']);
    expect(done).toMatchObject({ state: 'FAILED', exitCode: 3, reason: 'EXIT_CODE_3' });
  });

  it('cancels a running job through its agent: 202 now, the process stopped, CANCELLED later', async () => {
    const created = await api.request('POST', '/v1/jobs', jobBody(['sh', '-c', 'exec sleep 60']));
    await waitForState(created.body.id, ['RUNNING']);
    // Its process on this host, found by its env (a sandboxed job cannot say its host pid).
    await waitFor('its process', () => jobProcesses(created.body.id).length > 0, { timeoutMs: 10_000 });

    const cancel = await api.request('POST', `/v1/jobs/${created.body.id}/cancel`);
    expect(cancel.status).toBe(202);
    expect(cancel.body).toMatchObject({ cancelRequested: true, state: 'RUNNING' });
    const again = await api.request('POST', `/v1/jobs/${created.body.id}/cancel`);
    expect(again.status).toBe(202);

    const done = await waitForState(created.body.id, ['CANCELLED', 'FAILED', 'SUCCEEDED']);
    expect(done.state).toBe('CANCELLED');
    expect(jobProcesses(created.body.id)).toEqual([]);
    const types = (await api.request('GET', `/v1/jobs/${created.body.id}/events`)).body.items.map((e: any) => e.type);
    expect(types.filter((t: string) => t === 'CANCEL_REQUESTED')).toHaveLength(1);

    const terminal = await api.request('POST', `/v1/jobs/${created.body.id}/cancel`);
    expect(terminal.status).toBe(200);
    expect(terminal.body.state).toBe('CANCELLED');
  });

  it('cancels a job that was never dispatched at once', async () => {
    const created = await api.request('POST', '/v1/jobs', jobBody(['true'], { resources: { gpus: 8, gpuModel: 'NO-SUCH-GPU', cpuCores: 1, memoryMiB: 1 } }));
    await waitFor('pending reason', async () => (await api.request('GET', `/v1/jobs/${created.body.id}`)).body.pendingReason === 'NO_MATCHING_NODES', {
      timeoutMs: 15_000,
    });
    const cancel = await api.request('POST', `/v1/jobs/${created.body.id}/cancel`);
    expect(cancel.status).toBe(202);
    expect(cancel.body).toMatchObject({ state: 'CANCELLED', cancelRequested: true });
  });
});

describe('the gateway at its edges', () => {
  it('answers 401 without a token and for an unknown one, as problem+json', async () => {
    const none = await new GatewayClient(stack.gatewayUrl, null).request('GET', '/v1/jobs/00000000-0000-0000-0000-000000000000');
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(none.body).toMatchObject({ status: 401, title: 'Unauthenticated' });
    expect((await new GatewayClient(stack.gatewayUrl, 'wrong-token').request('GET', '/v1/jobs/x')).status).toBe(401);
  });

  it('rejects bad bodies naming the fields, and creates nothing', async () => {
    const marker = uniqueTag('never-created');
    const bad = await api.request('POST', '/v1/jobs', { ...jobBody(['true']), name: marker, nodes: 0, bogus: true });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: any) => e.field).sort()).toEqual(['bogus', 'nodes']);
    const malformed = await api.request('POST', '/v1/jobs', '{"name":');
    expect(malformed.status).toBe(400);
    expect(malformed.body.title).toBe('Malformed JSON');
    const huge = await api.request('POST', '/v1/jobs', { ...jobBody(['true']), env: { BIG: 'x'.repeat(1024 * 1024 + 10) } });
    expect(huge.status).toBe(413);
  });

  it('404 for a job that does not exist', async () => {
    expect((await api.request('GET', '/v1/jobs/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    expect((await api.request('GET', '/v1/jobs/not-a-uuid')).status).toBe(404);
  });

  it('rejects a tampered events cursor', async () => {
    const created = await api.request('POST', '/v1/jobs', jobBody(['true']));
    await waitForState(created.body.id, ['SUCCEEDED']);
    const page = await api.request('GET', `/v1/jobs/${created.body.id}/events?limit=1`);
    expect(page.body.items).toHaveLength(1);
    const cursor: string = page.body.nextCursor;
    expect(cursor).toEqual(expect.any(String));
    const next = await api.request('GET', `/v1/jobs/${created.body.id}/events?limit=1&cursor=${encodeURIComponent(cursor)}`);
    expect(next.body.items[0].seq).toBe(2);
    const tampered = await api.request('GET', `/v1/jobs/${created.body.id}/events?cursor=${encodeURIComponent('x' + cursor.slice(1))}`);
    expect(tampered.status).toBe(400);
  });

  it('serves health, readiness, metrics and the OpenAPI document', async () => {
    for (const s of stack.services) {
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
      expect(await (await fetch(`${s.url}/metrics`)).text()).toContain('process_cpu_user_seconds_total');
    }
    const doc = (await (await fetch(`${stack.gatewayUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/jobs', '/v1/jobs/{id}', '/v1/jobs/{id}/cancel', '/v1/jobs/{id}/events']));
  });
});

describe('what wakes the scheduler (its tick is ten minutes here)', () => {
  const node = (i: number) => `${tag}-${String(i).padStart(5, '0')}`;
  const cordon = async (ids: string[], on: boolean) => {
    for (const id of ids) expect((await api.request('POST', `/v1/nodes/${id}/${on ? 'cordon' : 'uncordon'}`)).status).toBe(200);
  };
  // Nodes 0 and 2 are the fleet's 8 x H100 (apps/node-agent/src/fleet/fleet-layout.ts).
  const wholeH100 = (command: string[]) => jobBody(command, { resources: { gpus: 8, gpuModel: 'H100', cpuCores: 1, memoryMiB: 256 } });

  it('places a job queued on a cordoned fleet as soon as a node is uncordoned, and the next as soon as the first ends', async () => {
    const all = [node(0), node(1), node(2)];
    // Jobs above run on any node, so the fleet may not all be registered yet on a loaded machine.
    for (const id of all)
      await waitFor(`node ${id} registered`, async () => (await api.request('GET', `/v1/nodes/${id}`)).status === 200, { timeoutMs: 60_000 });
    await cordon(all, true);
    try {
      const first = await api.request('POST', '/v1/jobs', wholeH100(['sleep', '1']));
      const second = await api.request('POST', '/v1/jobs', wholeH100(['true']));
      expect([first.status, second.status]).toEqual([201, 201]);
      // The creates woke cycles that found nowhere to go and said so; none is left to run.
      for (const j of [first, second]) {
        await waitFor(`a pending reason on ${j.body.id}`, async () => (await api.request('GET', `/v1/jobs/${j.body.id}`)).body.pendingReason ?? undefined, {
          timeoutMs: 15_000,
        });
      }
      await cordon([node(0)], false);
      const running = await waitForState(first.body.id, ['RUNNING', 'SUCCEEDED'], 15_000);
      expect(running.nodeIds).toEqual([node(0)]);
      expect((await api.request('GET', `/v1/jobs/${second.body.id}`)).body.state).toBe('QUEUED');
      // The first job's end frees node 0's GPUs; the second starts on it without waiting for a tick.
      const done = await waitForState(second.body.id, ['SUCCEEDED'], 20_000);
      expect(done.nodeIds).toEqual([node(0)]);
    } finally {
      await cordon(all, false);
    }
  });
});
