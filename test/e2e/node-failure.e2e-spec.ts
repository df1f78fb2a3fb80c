import { DataSource } from 'typeorm';
import { ServiceProcess, waitFor } from '@gantry/stack';
import { TestStack, jobProcesses, openDataSource, startTestStack, uniqueTag } from '@gantry/testing';

/**
 * Node death, requeue and fencing through the real processes, with short timeouts:
 * beats every 500 ms, suspect after 2 s, the agent fences itself after 3 s without an
 * acknowledged beat, dead after 5 s.
 */
const TIMEOUTS = {
  GANTRY_HEARTBEAT_MS: '500',
  GANTRY_NODE_SUSPECT_MS: '2000',
  GANTRY_AGENT_FENCE_MS: '3000',
  GANTRY_NODE_DEAD_MS: '5000',
  GANTRY_DETECTOR_INTERVAL_MS: '500',
  GANTRY_INGEST_STALL_MS: '3000',
  GANTRY_LEADER_LEASE_MS: '3000',
  GANTRY_PHANTOM_GRACE_MS: '3000',
};

let e2e: TestStack;
let spare: ServiceProcess;
let ds: DataSource;

jest.setTimeout(120_000);

beforeAll(async () => {
  ds = await openDataSource();
  e2e = await startTestStack({ suite: 'node-failure', simNodes: 1, env: TIMEOUTS });
  // A second agent with one node of its own: where the work goes when the first node dies.
  spare = e2e.extraAgent('spare-agent', { nodes: 1, prefix: uniqueTag('spare') }, { GANTRY_KILL_GRACE_MS: '1000' });
});

afterAll(async () => {
  e2e?.stack.get('node-agent').kill('SIGCONT');
  await spare?.stop();
  await e2e?.stack.stop();
  await ds?.destroy();
});

/** Live ranks of a job: the invariant is that they all belong to one attempt. */
async function liveAttempts(jobId: string): Promise<number[]> {
  const rows = await ds.query(`SELECT DISTINCT attempt FROM attempt_nodes WHERE job_id = $1 AND released_at IS NULL`, [jobId]);
  return rows.map((r: { attempt: number }) => r.attempt);
}

it('a node that dies loses its attempt; the job runs again as attempt 2 elsewhere; the returning agent fenced itself', async () => {
  const { job } = await e2e.admin.createJob({
    name: 'survivor',
    image: 'none',
    maxRetries: 1,
    command: ['sh', '-c', 'exec sleep 120'],
    resources: { gpus: 0, cpuCores: 1, memoryMiB: 64 },
  });
  // Its attempt-1 process on this host, found by its env (a sandboxed job cannot say its host pid).
  await waitFor('attempt 1 running', async () => (await e2e.admin.getJob(job.id)).state === 'RUNNING' && jobProcesses(job.id, 1).length > 0, {
    timeoutMs: 30_000,
  });
  const firstNode = (await e2e.admin.getJob(job.id)).nodeIds[0];

  // The spare node joins, then the first node's agent freezes (a partition, from Kafka's side).
  spare.start();
  await spare.ready(60_000);
  const agent = e2e.stack.get('node-agent');
  agent.kill('SIGSTOP');
  const stoppedAt = Date.now();

  let twoLive = false;
  const watch = setInterval(() => void liveAttempts(job.id).then((a) => (twoLive ||= a.length > 1)), 100);
  try {
    const moved = await waitFor(
      'attempt 2 running on the spare node',
      async () => {
        const j = await e2e.admin.getJob(job.id);
        return j.attempt === 2 && j.state === 'RUNNING' ? j : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(moved.nodeIds[0]).not.toBe(firstNode);
    const requeuedAfterMs = Date.now() - stoppedAt;
    // Never before the dead timeout (and so never before the agent's own fence).
    expect(requeuedAfterMs).toBeGreaterThanOrEqual(5_000);

    // The frozen agent comes back: it has fenced itself, its attempt-1 process is gone, and its reports change nothing.
    agent.kill('SIGCONT');
    await waitFor('attempt 1 process stopped', () => jobProcesses(job.id, 1).length === 0, { timeoutMs: 20_000 });
    const after = await e2e.admin.getJob(job.id);
    expect(after).toMatchObject({ state: 'RUNNING', attempt: 2 });
    const events = await e2e.admin.jobEvents(job.id);
    expect(events.filter((e) => e.type === 'STATE_CHANGED').map((e) => `${e.fromState}>${e.toState}:${e.attempt}${e.reason ? `:${e.reason}` : ''}`)).toEqual([
      'QUEUED>SCHEDULED:1',
      'SCHEDULED>RUNNING:1',
      'RUNNING>QUEUED:1:NODE_LOST',
      'QUEUED>SCHEDULED:2',
      'SCHEDULED>RUNNING:2',
    ]);
    expect(twoLive).toBe(false);
  } finally {
    clearInterval(watch);
    await e2e.admin.cancelJob(job.id);
  }
});
