import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack, waitFor } from '@gantry/stack';
import { startTestStack, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Contract §4.7's arrays through the real services (ADR 0025): an array of 100 with parallelism 10
 * never has more than 10 children placed at once (sampled through the parent's summary while it
 * drains, and from the children's own start and end stamps), each child's process sees its
 * GANTRY_ARRAY_INDEX, the parent ends SUCCEEDED; a replay returns the same parent; cancelling the
 * parent cancels every child.
 */

let stack: Stack;
let api: GatewayClient;
let tag: string;
let work: string;

jest.setTimeout(180_000);

beforeAll(async () => {
  const e2e = await startTestStack({ suite: 'job-arrays' });
  ({ stack, tag, work } = e2e);
  api = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
});

afterAll(async () => {
  await stack?.stop();
});

function job(name: string, script: string, extra: object = {}) {
  return { name, image: 'none', command: ['sh', '-c', script], labels: { suite: tag }, resources: { gpus: 0, cpuCores: 1, memoryMiB: 64 }, ...extra };
}

const terminal = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

async function children(parentId: string): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; ; pages++) {
    if (pages > 100) throw new Error('the children listing does not end');
    const r = await api.request('GET', `/v1/jobs?arrayOf=${parentId}&limit=30${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(r.status).toBe(200);
    all.push(...r.body.items);
    cursor = r.body.nextCursor;
    if (!cursor) break;
  }
  return all;
}

describe('arrays', () => {
  it('runs 100 children at most 10 at once, each with its GANTRY_ARRAY_INDEX, and the parent ends SUCCEEDED', async () => {
    const log = join(work, `array-${uniqueTag()}`);
    const script = `echo "$GANTRY_ARRAY_INDEX start $(date +%s%N)" >> "${log}"; sleep 0.2; echo "$GANTRY_ARRAY_INDEX end $(date +%s%N)" >> "${log}"`;
    const created = await api.request('POST', '/v1/jobs', job('sweep', script, { array: { size: 100, parallelism: 10 } }));
    expect(created.status).toBe(201);
    const parent = created.body;
    expect(parent).toMatchObject({ array: { size: 100, parallelism: 10 }, arrayOf: null, arrayIndex: null });
    expect(parent.array.children.QUEUED).toBe(100);

    // Sample the number placed while it drains; the parent's own state moves QUEUED -> RUNNING -> SUCCEEDED.
    let most = 0;
    let sawRunning = false;
    const done = await waitFor(
      'the array to end',
      async () => {
        const r = await api.request('GET', `/v1/jobs/${parent.id}`);
        most = Math.max(most, r.body.array.children.SCHEDULED + r.body.array.children.RUNNING);
        if (r.body.state === 'RUNNING') sawRunning = true;
        return terminal.includes(r.body.state) ? r.body : undefined;
      },
      { timeoutMs: 150_000, intervalMs: 50 },
    );
    expect(done).toMatchObject({ state: 'SUCCEEDED', array: { children: { SUCCEEDED: 100, QUEUED: 0, RUNNING: 0 } } });
    expect(sawRunning).toBe(true);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(10);

    // The children's own stamps: never more than 10 processes alive at once, and each index once.
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    const starts = lines.filter((l) => l[1] === 'start');
    expect(starts.map((l) => Number(l[0])).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const edges = lines.map((l) => ({ at: BigInt(l[2]), d: l[1] === 'start' ? 1 : -1 })).sort((a, b) => (a.at === b.at ? a.d - b.d : a.at < b.at ? -1 : 1));
    let alive = 0;
    let peak = 0;
    for (const e of edges) peak = Math.max(peak, (alive += e.d));
    expect(peak).toBeLessThanOrEqual(10);

    const kids = await children(parent.id);
    expect(kids.map((k) => k.arrayIndex)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(kids.every((k) => k.arrayOf === parent.id && k.state === 'SUCCEEDED' && k.array === null)).toBe(true);
    const events = await api.request('GET', `/v1/jobs/${parent.id}/events`);
    expect(events.body.items.filter((e: any) => e.type === 'STATE_CHANGED').map((e: any) => [e.fromState, e.toState])).toEqual([
      ['QUEUED', 'RUNNING'],
      ['RUNNING', 'SUCCEEDED'],
    ]);
  });

  it('a replay with the same Idempotency-Key returns the same parent and creates no more children', async () => {
    const key = `array-${uniqueTag()}`;
    const body = job('replayed', 'true', { array: { size: 5 }, queue: 'default' });
    const first = await api.request('POST', '/v1/jobs', body, { 'idempotency-key': key });
    const again = await api.request('POST', '/v1/jobs', body, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(await children(first.body.id)).toHaveLength(5);
    // The parent is never placed: explain sends the caller to its children.
    expect((await api.request('GET', `/v1/jobs/${first.body.id}/explain`)).status).toBe(409);
  });

  it('cancelling the parent cancels every child, running or queued, and the parent ends CANCELLED', async () => {
    const created = await api.request('POST', '/v1/jobs', job('cancelled', 'sleep 60', { array: { size: 20, parallelism: 3 } }));
    const parent = created.body;
    await waitFor('3 children running', async () => (await api.request('GET', `/v1/jobs/${parent.id}`)).body.array.children.RUNNING === 3, {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    // The other 17 wait, saying why.
    await waitFor(
      'the queued children held at the cap',
      async () => {
        const queued = (await children(parent.id)).filter((k) => k.state === 'QUEUED');
        return queued.length === 17 && queued.every((k) => k.pendingReason === 'ARRAY_PARALLELISM');
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const cancel = await api.request('POST', `/v1/jobs/${parent.id}/cancel`);
    expect(cancel.status).toBe(202);
    expect(cancel.body).toMatchObject({ cancelRequested: true });
    expect(cancel.body.array.children.CANCELLED).toBe(17);
    const done = await waitFor(
      'the array to end',
      async () => {
        const r = await api.request('GET', `/v1/jobs/${parent.id}`);
        return terminal.includes(r.body.state) ? r.body : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(done).toMatchObject({ state: 'CANCELLED', reason: 'CANCELLED_BY_USER', array: { children: { CANCELLED: 20 } } });
    expect((await children(parent.id)).every((k) => k.state === 'CANCELLED' && k.cancelRequested)).toBe(true);
    // Cancelling again is success with the job unchanged.
    expect((await api.request('POST', `/v1/jobs/${parent.id}/cancel`)).status).toBe(200);
  });

  it.each([
    ['a size over 10,000', { size: 10_001 }],
    ['a size of 0', { size: 0 }],
    ['parallelism over size', { size: 2, parallelism: 3 }],
    ['an unknown field', { size: 2, step: 1 }],
    ['not an object', [2]],
  ])('refuses %s with a 400 problem', async (_, array) => {
    const r = await api.request('POST', '/v1/jobs', job('bad', 'true', { array }));
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
  });

  it('refuses an array whose copies would be too large', async () => {
    const r = await api.request('POST', '/v1/jobs', job('big', 'true', { array: { size: 10_000 }, env: { BLOB: 'x'.repeat(8_000) } }));
    expect(r.status).toBe(400);
    expect(r.body.errors[0].field).toBe('array.size');
  });
});
