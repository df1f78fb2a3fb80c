import { join } from 'node:path';
import { Stack, waitFor } from '@gantry/stack';
import { startTestStack, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Contract §4.7's retry policy through the real services (ADR 0022): a job whose command fails
 * with a listed exit code is placed again after a backoff that grows, and a job failing with a code
 * that is not listed ends at once. The flaky job counts its attempts in a file of its own.
 */

let stack: Stack;
let api: GatewayClient;
let tag: string;
let work: string;

jest.setTimeout(120_000);

beforeAll(async () => {
  const e2e = await startTestStack({ suite: 'retry-policy' });
  ({ stack, tag, work } = e2e);
  api = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
});

afterAll(async () => {
  await stack?.stop();
});

/** Exits 3 on its first `failures` runs and 0 after, counting runs in `$COUNT`. */
function flakyJob(failures: number, extra: object = {}) {
  const count = join(work, `count-${uniqueTag()}`);
  const script = `n=$(cat "$COUNT" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$COUNT"; [ $n -gt ${failures} ] && exit 0; exit 3`;
  return {
    name: 'flaky',
    image: 'none',
    command: ['sh', '-c', script],
    env: { COUNT: count },
    labels: { suite: tag },
    resources: { gpus: 0, cpuCores: 1, memoryMiB: 64 },
    ...extra,
  };
}

const terminal = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

describe('retry policy', () => {
  it('retries a job failing with a listed exit code after growing backoffs, waiting as BACKOFF, and it succeeds at attempt 3', async () => {
    const policy = { maxRetries: 2, backoffSeconds: 2, maxBackoffSeconds: 60, retryOnExitCodes: [3] };
    const created = await api.request('POST', '/v1/jobs', flakyJob(2, { retryPolicy: policy }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ maxRetries: 2, retryPolicy: policy, notBefore: null });

    // Watch it wait: at some point QUEUED after an attempt, BACKOFF, with the time it waits for.
    const seenBackoff: Array<{ attempt: number; notBefore: string }> = [];
    const done = await waitFor(
      'the flaky job to end',
      async () => {
        const r = await api.request('GET', `/v1/jobs/${created.body.id}`);
        if (r.body.state === 'QUEUED' && r.body.pendingReason === 'BACKOFF') seenBackoff.push({ attempt: r.body.attempt, notBefore: r.body.notBefore });
        return terminal.includes(r.body.state) ? r.body : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(done).toMatchObject({ state: 'SUCCEEDED', attempt: 3, exitCode: 0 });
    expect(new Set(seenBackoff.map((s) => s.attempt))).toEqual(new Set([1, 2]));
    expect(seenBackoff.every((s) => typeof s.notBefore === 'string')).toBe(true);

    const events = (await api.request('GET', `/v1/jobs/${created.body.id}/events`)).body.items as any[];
    const requeued = events.filter((e) => e.type === 'STATE_CHANGED' && e.toState === 'QUEUED');
    const placed = events.filter((e) => e.type === 'STATE_CHANGED' && e.toState === 'SCHEDULED');
    expect(requeued.map((e) => e.attempt)).toEqual([1, 2]);
    expect(placed.map((e) => e.attempt)).toEqual([1, 2, 3]);
    const delays = requeued.map((e) => Number(/^EXIT_CODE_3; retry in (\d+) ms$/.exec(e.reason)![1]));
    // Equal jitter on 2 s, then 4 s: [1, 2] s, then [2, 4] s, so the second never waits less.
    expect(delays[0]).toBeGreaterThanOrEqual(1000);
    expect(delays[0]).toBeLessThanOrEqual(2000);
    expect(delays[1]).toBeGreaterThanOrEqual(2000);
    expect(delays[1]).toBeLessThanOrEqual(4000);
    expect(delays[1]).toBeGreaterThanOrEqual(delays[0]);
    // Each gap between the failure and the next placement is at least its backoff, and not much more
    // (a cycle within the scheduler's 1 s interval, plus generous slack for a loaded shared machine).
    const gaps = requeued.map((e, i) => Date.parse(placed[i + 1].at) - Date.parse(e.at));
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(delays[i] - 50);
      expect(gap).toBeLessThan(delays[i] + 15_000);
    });
  });

  it('ends a job at once when its exit code is not listed, retries left or not', async () => {
    const created = await api.request('POST', '/v1/jobs', flakyJob(5, { maxRetries: 3, retryPolicy: { retryOnExitCodes: [4] } }));
    expect(created.status).toBe(201);
    expect(created.body.retryPolicy).toEqual({ maxRetries: 3, backoffSeconds: 10, maxBackoffSeconds: 600, retryOnExitCodes: [4] });
    const done = await waitFor(
      'the job to end',
      async () => {
        const r = await api.request('GET', `/v1/jobs/${created.body.id}`);
        return terminal.includes(r.body.state) ? r.body : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(done).toMatchObject({ state: 'FAILED', attempt: 1, exitCode: 3, reason: 'EXIT_CODE_3' });
  });

  it('refuses a body whose shorthand and policy disagree, naming the field', async () => {
    const r = await api.request('POST', '/v1/jobs', flakyJob(0, { maxRetries: 1, retryPolicy: { maxRetries: 2 } }));
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
    expect(r.body.errors).toEqual([expect.objectContaining({ field: 'retryPolicy.maxRetries' })]);
  });
});
