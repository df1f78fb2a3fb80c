import { DataSource } from 'typeorm';
import { Stack, waitFor } from '@gantry/stack';
import { openDataSource, startTestStack } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Contract §4.7's preemption through the real services. The stack's three simulated nodes hold two
 * 8 x H100 nodes (fleet-layout.ts): 16 one-GPU H100 jobs of a low band fill them. The sleep executor
 * takes SIM_STOP_MS = 5 s to stop, longer than the 2 s preemption grace, so each victim is "killed"
 * at the grace and its devices stay held until then: the preemptor cannot start sooner.
 */
const GRACE_MS = 2_000;
const CYCLE_MS = 1_000;
/** What a loaded test machine adds to a KILL's trip and a report's (Kafka, the outbox relay, the reconciler). */
const SLACK_MS = 6_000;
const LOW_RUN_MS = 25_000;

let stack: Stack;
let api: GatewayClient;
let ds: DataSource;
let tag: string;

jest.setTimeout(300_000);

beforeAll(async () => {
  const e2e = await startTestStack({
    suite: 'preemption',
    agentEnv: { GANTRY_SIM_EXECUTOR: 'sleep' },
    serviceEnv: {
      scheduler: { GANTRY_PREEMPTION_GRACE_MS: String(GRACE_MS), GANTRY_PREEMPTION_COOLDOWN_MS: '600000', GANTRY_SCHEDULER_INTERVAL_MS: String(CYCLE_MS) },
    },
  });
  ({ stack, tag } = e2e);
  api = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  ds = await openDataSource();
  for (const [name, priority, preemption] of [
    ['low', 10, 'never'],
    ['same', 10, 'lowerPriority'],
    ['high', 50, 'lowerPriority'],
  ] as const) {
    const res = await api.request('POST', '/v1/queues', { name: `${name}-${tag}`, priority, preemption });
    expect(res.status).toBe(201);
    expect(res.body.preemption).toBe(preemption);
  }
  // A cohort (ADR 0039): the lender's guarantee is 8 GPUs and it borrows nothing; the borrower's is 8
  // and it may borrow 8 more, which is all of the fleet's 16 H100s while the lender is idle.
  for (const body of [
    { name: `org-${tag}`, priority: 30 },
    { name: `lender-${tag}`, priority: 30, parent: `org-${tag}`, quota: { gpus: 8 }, preemption: 'lowerPriority' },
    { name: `borrower-${tag}`, priority: 30, parent: `org-${tag}`, quota: { gpus: 8 }, borrowingLimit: { gpus: 8 }, preemption: 'never' },
  ]) {
    expect((await api.request('POST', '/v1/queues', body)).status).toBe(201);
  }
});

afterAll(async () => {
  await ds?.query(`UPDATE jobs SET state = 'CANCELLED' WHERE labels->>'suite' = $1 AND state = 'QUEUED'`, [tag]).catch(() => undefined);
  await ds?.destroy();
  await stack?.stop();
});

function h100(queue: string, gpus: number, runMs: number) {
  return {
    queue: `${queue}-${tag}`,
    name: `${queue}-${gpus}`,
    image: 'none',
    command: ['true'],
    labels: { suite: tag },
    maxRetries: 0,
    env: { SIM_DURATION_MS: String(runMs), SIM_STOP_MS: '5000' },
    resources: { gpus, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1024 },
  };
}

async function submit(body: object): Promise<string> {
  const res = await api.request('POST', '/v1/jobs', body);
  expect(res.status).toBe(201);
  return res.body.id;
}

const job = async (id: string): Promise<any> => (await api.request('GET', `/v1/jobs/${id}`)).body;
const events = async (id: string): Promise<any[]> => (await api.request('GET', `/v1/jobs/${id}/events?limit=100`)).body.items;

async function untilRunning(ids: string[], attempt?: number): Promise<any[]> {
  return waitFor(
    `${ids.length} jobs running`,
    async () => {
      const jobs = await Promise.all(ids.map(job));
      return jobs.every((j) => j.state === 'RUNNING' && (attempt === undefined || j.attempt === attempt)) ? jobs : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

/** Jobs of this suite told to stop for `preemptorId`, from their events. */
async function victimsOf(ids: string[], preemptorId: string): Promise<string[]> {
  const all = await Promise.all(ids.map(async (id) => ({ id, events: await events(id) })));
  return all.filter((j) => j.events.some((e) => e.type === 'PREEMPTION_REQUESTED' && e.reason.includes(preemptorId))).map((j) => j.id);
}

describe('preemption', () => {
  it('refuses an unknown policy', async () => {
    const res = await api.request('POST', '/v1/queues', { name: `bad-${tag}`, priority: 1, preemption: 'always' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('preemption');
    const patched = await api.request('PATCH', `/v1/queues/low-${tag}`, { preemption: 'sometimes' });
    expect(patched.status).toBe(400);
  });

  it('a high band ends the fewest low-band GPUs, starts after they stopped within grace + a cycle, and they finish later as attempt 2; a same band and the cooldown never preempt', async () => {
    const low = await Promise.all(Array.from({ length: 16 }, () => submit(h100('low', 1, LOW_RUN_MS))));
    await untilRunning(low, 1);

    // A job of the same band, even in a lowerPriority queue, only waits.
    const same = await submit(h100('same', 8, 1_000));
    await waitFor(
      'the same-band job told why it waits',
      async () => {
        const j = await job(same);
        return j.pendingReason?.startsWith('INSUFFICIENT_CAPACITY') ? j : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );

    const high = await submit(h100('high', 8, 2_000));
    const highRunning = await waitFor(
      'the high-band job running',
      async () => {
        const j = await job(high);
        return j.state === 'RUNNING' || j.state === 'SUCCEEDED' ? j : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );

    // Eight one-GPU jobs on the node it runs on: the fewest GPUs that make an 8-GPU job fit.
    const victims = await victimsOf(low, high);
    expect(victims).toHaveLength(8);
    const victimJobs = await Promise.all(victims.map(job));
    const requested = Math.min(
      ...(await Promise.all(victims.map(async (id) => Date.parse((await events(id)).find((e) => e.type === 'PREEMPTION_REQUESTED').at)))),
    );
    const startedAt = Date.parse(highRunning.startedAt);
    // Not before the victims' grace ran out (they take longer to stop): no device was handed out twice.
    expect(startedAt - requested).toBeGreaterThanOrEqual(GRACE_MS);
    expect(startedAt - requested).toBeLessThanOrEqual(GRACE_MS + CYCLE_MS + SLACK_MS);
    expect(startedAt - Date.parse(highRunning.createdAt)).toBeLessThanOrEqual(GRACE_MS + 2 * CYCLE_MS + SLACK_MS);
    const [overlap] = await ds.query(
      `SELECT count(*)::int AS n FROM attempt_nodes h JOIN attempt_nodes v ON v.node_id = h.node_id AND v.gpu_indices && h.gpu_indices
       WHERE h.job_id = $1 AND v.job_id = ANY($2::uuid[]) AND v.attempt = 1 AND (v.released_at IS NULL OR v.released_at > h.created_at)`,
      [high, victims],
    );
    expect(overlap.n).toBe(0);

    for (const v of victimJobs) {
      const evs = await events(v.id);
      expect(evs.find((e) => e.type === 'PREEMPTION_REQUESTED')).toMatchObject({ attempt: 1, reason: expect.stringContaining('PREEMPTED') });
      expect(evs.find((e) => e.type === 'STATE_CHANGED' && e.toState === 'QUEUED')).toMatchObject({ fromState: 'RUNNING', attempt: 1, reason: 'PREEMPTED' });
    }
    const sameEvents = await events(same);
    expect(sameEvents.some((e) => e.type === 'STATE_CHANGED' && e.toState === 'SCHEDULED' && Date.parse(e.at) < startedAt)).toBe(false);
    expect((await job(same)).pendingReason).not.toBe('PREEMPTING');

    // The victims come back as attempt 2 (maxRetries 0: no retry used) once the high job is done, and finish.
    await untilRunning(victims, 2);
    await api.request('POST', `/v1/jobs/${same}/cancel`);

    // The fleet is full again; every victim is in its cooldown, so a second high job ends others only.
    await untilRunning(low);
    const high2 = await submit(h100('high', 8, 1_000));
    await waitFor(
      'the second high-band job running',
      async () => {
        const j = await job(high2);
        return j.state === 'RUNNING' || j.state === 'SUCCEEDED' ? j : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    const victims2 = await victimsOf(low, high2);
    expect(victims2).toHaveLength(8);
    expect(victims2.filter((v) => victims.includes(v))).toEqual([]);

    const ended = await waitFor(
      'every low job ended',
      async () => {
        const jobs = await Promise.all(low.map(job));
        return jobs.every((j) => j.state === 'SUCCEEDED') ? jobs : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    for (const j of ended) expect(j.attempt).toBe(victims.includes(j.id) || victims2.includes(j.id) ? 2 : 1);
  });
});

describe('reclaim', () => {
  it('a lender gets its guarantee back within the grace and a cycle: the newest borrowed attempt ends, nothing else', async () => {
    // The borrower fills both H100 nodes, one gang-free 8-GPU job at a time, so which is newest is known.
    const older = await submit(h100('borrower', 8, 120_000));
    await untilRunning([older], 1);
    const newer = await submit(h100('borrower', 8, 120_000));
    await untilRunning([newer], 1);

    // It runs 10 s: long enough to see the requeued borrower held by the cohort below.
    const lender = await submit(h100('lender', 8, 10_000));
    const running = await waitFor(
      'the lender running',
      async () => {
        const j = await job(lender);
        return j.state === 'RUNNING' || j.state === 'SUCCEEDED' ? j : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );

    expect(await victimsOf([older, newer], lender)).toEqual([newer]);
    const requested = Date.parse((await events(newer)).find((e) => e.type === 'PREEMPTION_REQUESTED').at);
    const startedAt = Date.parse(running.startedAt);
    // The victim takes longer to stop than the grace: the lender cannot start before it ran out.
    expect(startedAt - requested).toBeGreaterThanOrEqual(GRACE_MS);
    expect(startedAt - requested).toBeLessThanOrEqual(GRACE_MS + CYCLE_MS + SLACK_MS);
    expect(startedAt - Date.parse(running.createdAt)).toBeLessThanOrEqual(GRACE_MS + 2 * CYCLE_MS + SLACK_MS);
    expect((await events(newer)).find((e) => e.type === 'STATE_CHANGED' && e.toState === 'QUEUED')).toMatchObject({
      fromState: 'RUNNING',
      attempt: 1,
      reason: 'PREEMPTED',
    });
    expect(await job(older)).toMatchObject({ state: 'RUNNING', attempt: 1 });

    // Back at its guarantee, the borrower's requeued job waits for the cohort, not for the fleet, and
    // the cohort holds its 16 GPUs, no more.
    await waitFor(
      'the requeued borrower told it waits for its quota',
      async () => {
        const j = await job(newer);
        return j.state === 'QUEUED' && j.pendingReason === 'QUOTA_EXCEEDED' ? j : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    const [held] = await ds.query(`SELECT coalesce(sum(gpus), 0)::int AS n FROM queue_gpus_held WHERE queue = ANY($1::text[])`, [
      [`lender-${tag}`, `borrower-${tag}`],
    ]);
    expect(held.n).toBeLessThanOrEqual(16);
    for (const id of [older, newer]) await api.request('POST', `/v1/jobs/${id}/cancel`);
  });
});
