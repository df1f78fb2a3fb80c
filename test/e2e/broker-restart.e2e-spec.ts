import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { TOPICS } from '@gantry/contracts';
import { GantryClient } from '@gantry/client';
import { LocalKafkaBroker, Stack, waitFor } from '@gantry/stack';
import { HandAgent, openDataSource, startTestStack, testEnv, uniqueTag } from '@gantry/testing';

/**
 * A Kafka broker restart while jobs run (issue 19): the reconciler must not take the broker's
 * silence for the nodes'. Two kinds of work span the restart:
 *   - long jobs on the stack's simulated agent, which keep running through it;
 *   - a job on a node driven by hand that ends just before the broker stops: its node's beats stop
 *     listing it (one is consumed before the stop), and its final report, held up as a real agent's
 *     is (retried with backoff until the broker answers), arrives a moment after the beats resume.
 * Before the fix, the first beat after the restart lost that job as PHANTOM (its absence counted
 * through the outage) and it ran a second time; no attempt may be lost here.
 * This suite stops and starts the test broker itself (suites run one at a time, --runInBand).
 */
const TIMEOUTS = {
  GANTRY_HEARTBEAT_MS: '1000',
  GANTRY_NODE_SUSPECT_MS: '10000',
  GANTRY_NODE_DEAD_MS: '40000',
  // Longer than the restart, so the agents do not stop their own work (that would be a real loss).
  GANTRY_AGENT_FENCE_MS: '30000',
  GANTRY_PHANTOM_GRACE_MS: '6000',
  GANTRY_INGEST_STALL_MS: '3000',
};
const LONG = { SIM_DURATION_MS: '600000' };

let stack: Stack;
let admin: GantryClient;
let hand: HandAgent;
let ds: DataSource;
let beating: NodeJS.Timeout | null = null;
const tag = uniqueTag('brk');
const handNode = `${tag}-hand`;
const bootId = randomUUID();
let seq = 0;
/** What the hand node's beats list as running. */
let handRunning: Array<{ jobId: string; attempt: number }> = [];
const jobIds: string[] = [];
const broker = new LocalKafkaBroker(join(__dirname, '..', '..'), Number(testEnv.kafkaBrokers[0].split(':')[1]));

jest.setTimeout(180_000);

function handBeat() {
  return {
    nodeId: handNode,
    bootId,
    seq: ++seq,
    sentAt: Date.now(),
    zone: 'zone-h',
    rack: `${tag}-rh`,
    gpus: [{ index: 0, model: 'HANDGPU', memoryMiB: 1024, memoryUsedMiB: 0, utilization: 0.5, healthy: true }],
    cpu: { cores: 8, utilization: 0.1 },
    memory: { totalMiB: 16384, usedMiB: 1 },
    running: handRunning,
  };
}

/** Beats every period, as an agent does: a send that fails (the broker is away) is dropped, the next one tried. */
function startBeating(): void {
  beating = setInterval(() => void hand.sendBeats([hand.message(handNode, handBeat())]).catch(() => undefined), Number(TIMEOUTS.GANTRY_HEARTBEAT_MS));
}

async function report(jobId: string, state: 'RUNNING' | 'SUCCEEDED'): Promise<void> {
  const body = { nodeId: handNode, jobId, attempt: 1, state, at: Date.now(), ...(state === 'SUCCEEDED' ? { exitCode: 0 } : {}) };
  await hand.send(TOPICS.jobReports, [hand.message(handNode, body)]);
}

beforeAll(async () => {
  ds = await openDataSource();
  const e2e = await startTestStack({ suite: 'broker-restart', env: TIMEOUTS, simNodes: 2, agentEnv: { GANTRY_SIM_EXECUTOR: 'sleep' } });
  ({ stack, admin } = e2e);
  hand = new HandAgent(stack.gatewayUrl, e2e.adminToken);
  await hand.enroll(handNode);
  startBeating();
  await waitFor('hand node registered', async () => (await admin.request('GET', `/v1/nodes/${handNode}`)).status === 200, { timeoutMs: 30_000 });
});

afterAll(async () => {
  if (beating) clearInterval(beating);
  if (admin) for (const id of jobIds) await admin.cancelJob(id).catch(() => undefined);
  await hand?.close();
  await stack?.stop();
  if (jobIds.length) await ds?.query(`UPDATE attempt_nodes SET released_at = now() WHERE job_id = ANY($1::uuid[]) AND released_at IS NULL`, [jobIds]);
  await ds?.destroy();
});

const state = async (id: string) => (await admin.getJob(id)).state;

it('a broker restart loses no attempt: running work keeps running, a report held up by the outage is applied', async () => {
  const long: string[] = [];
  for (let i = 0; i < 4; i++) {
    // On the simulated fleet's H100 node, not the hand node (which runs only what the test says).
    const { job } = await admin.createJob({
      name: `long-${i}`,
      image: 'none',
      command: ['sleep'],
      maxRetries: 2,
      env: LONG,
      resources: { gpus: 1, gpuModel: 'H100', cpuCores: 1, memoryMiB: 64 },
    });
    long.push(job.id);
  }
  const { job: handJob } = await admin.createJob({
    name: 'ends-at-the-stop',
    image: 'none',
    command: ['sleep'],
    maxRetries: 2,
    resources: { gpus: 1, gpuModel: 'HANDGPU', cpuCores: 1, memoryMiB: 64 },
  });
  jobIds.push(...long, handJob.id);
  await waitFor('hand job placed on the hand node', async () => (await admin.getJob(handJob.id)).state === 'SCHEDULED', { timeoutMs: 30_000 });
  handRunning = [{ jobId: handJob.id, attempt: 1 }];
  await report(handJob.id, 'RUNNING');
  let states: string[] = [];
  await waitFor('every job running', async () => (states = await Promise.all([...long, handJob.id].map(state))).every((s) => s === 'RUNNING'), {
    timeoutMs: 30_000,
    intervalMs: 200,
    onTimeout: () => `states (long jobs, then the hand job): ${states.join(', ')}`,
  });

  // The hand job ends: its node's beats stop listing it; its final report is held back.
  handRunning = [];
  const endedAt = Date.now();
  // Two beats without it go out before the stop, so the reconciler has seen it missing.
  await waitFor('two beats without the job', () => Date.now() - endedAt >= 2.5 * Number(TIMEOUTS.GANTRY_HEARTBEAT_MS), { timeoutMs: 10_000, intervalMs: 100 });
  const stoppedAt = Date.now();
  await broker.stop();
  // Away longer than the phantom grace, as in test:chaos (stop 2-3 s, start 3-5 s).
  await waitFor('the broker away past the phantom grace', () => Date.now() - stoppedAt > Number(TIMEOUTS.GANTRY_PHANTOM_GRACE_MS) + 1_000, {
    timeoutMs: 20_000,
    intervalMs: 100,
  });
  await broker.start();
  const startedAt = Date.now();
  // The held-up report arrives a while after the beats resume (the agent's retry backoff): long
  // enough for the reconciler to have judged the first beats (the old rule lost the job there),
  // well within a phantom grace of the view coming back.
  await waitFor('the hand node heard again', async () => Date.parse((await admin.request('GET', `/v1/nodes/${handNode}`)).body.lastHeartbeatAt) > startedAt, {
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  const heardAt = Date.now();
  await waitFor('two seconds of beats', () => Date.now() - heardAt > 2_000, { timeoutMs: 5_000, intervalMs: 100 });
  await report(handJob.id, 'SUCCEEDED');
  await Promise.all(stack.services.map((s) => s.ready(60_000)));
  await waitFor(
    'hand job SUCCEEDED or lost',
    async () => {
      const j = await admin.getJob(handJob.id);
      return j.state === 'SUCCEEDED' || j.attempt > 1 ? j : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  // A few phantom graces more, for a late loss to show.
  await waitFor('settle', () => Date.now() - startedAt > 3 * Number(TIMEOUTS.GANTRY_PHANTOM_GRACE_MS), { timeoutMs: 30_000, intervalMs: 200 });

  const lost = await ds.query(`SELECT job_id, reason, attempt FROM job_events WHERE job_id = ANY($1::uuid[]) AND reason IN ('NODE_LOST', 'PHANTOM')`, [
    [...long, handJob.id],
  ]);
  expect(lost).toEqual([]);
  expect(await admin.getJob(handJob.id)).toMatchObject({ state: 'SUCCEEDED', attempt: 1 });
  for (const id of long) expect(await admin.getJob(id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
  console.log(`broker away ${startedAt - stoppedAt} ms; hand node heard ${heardAt - startedAt} ms after its start`);
});
