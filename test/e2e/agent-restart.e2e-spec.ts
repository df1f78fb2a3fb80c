import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceProcess, waitFor } from '@gantry/stack';
import { TestStack, jobProcesses, jobScratchDir, startTestStack, uniqueTag } from '@gantry/testing';

/*
 * Contract 4.4 on a real agent process on this machine (ADR 0020): an agent killed with kill -9
 * loses nothing and runs nothing twice; a memory hog over its memoryMiB ends OOM_KILLED (this
 * machine mounts cgroup v1 with writable cpu and memory hierarchies); a job with an image on a
 * node without a container runtime is refused where the agent's policy says so.
 *
 * The agent is a real one (GANTRY_SIM_NODES=0) with no container runtime and the refuse policy.
 * Each job appends a line to a marker file each time it starts: the number of lines is the number
 * of times it ran. Jobs have retries left, so a restart wrongly judged a loss would show as attempt 2.
 */

let e2e: TestStack;
let agent: ServiceProcess;
// Jobs write their markers here: a scratch path the sandboxed attempts may write (ADR 0033).
const dir = jobScratchDir('gantry-restart-e2e-');
const prefix = uniqueTag('restart');
const nodeId = `${prefix}-node`;

jest.setTimeout(240_000);
/** Short, so that an adopted attempt missing from the restarted agent's beats would be lost within the test. */
const PHANTOM_GRACE_MS = 3000;

beforeAll(async () => {
  e2e = await startTestStack({
    suite: 'agent-restart',
    simNodes: 0,
    fleetPrefix: prefix,
    env: { GANTRY_PHANTOM_GRACE_MS: String(PHANTOM_GRACE_MS) },
    agentEnv: {
      GANTRY_NODE_ID: nodeId,
      GANTRY_NVIDIA_SMI: join(dir, 'no-nvidia-smi'),
      GANTRY_AGENT_CONTAINER_RUNTIME: 'none',
      GANTRY_AGENT_IMAGE_POLICY: 'refuse',
    },
  });
  agent = e2e.stack.get('node-agent');
  await healthy();
});

afterAll(async () => {
  writeFileSync(join(dir, 'release-all'), '');
  await e2e?.stack.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function healthy() {
  await waitFor(`${nodeId} registered and healthy`, async () => (await e2e.admin.getNode(nodeId).catch(() => null))?.health === 'HEALTHY', {
    timeoutMs: 60_000,
    intervalMs: 200,
  });
}

/**
 * A job that appends to its marker file, prints `started`, then waits for its release file (or
 * release-all), prints `released-<attempt>` and exits 0. `alive`: whether a process of it runs on
 * this host (found by its env: a sandboxed job cannot say its host pid).
 */
async function markerJob(name: string) {
  const marker = join(dir, `${name}.runs`);
  const release = join(dir, `${name}.release`);
  const startedFile = join(dir, `${name}.started`);
  const script = `echo "$GANTRY_ATTEMPT" >> "${marker}"; echo started; touch "${startedFile}"; while [ ! -e "${release}" ] && [ ! -e "${dir}/release-all" ]; do sleep 0.1; done; echo "released-$GANTRY_ATTEMPT"`;
  const { job } = await e2e.admin.createJob({
    name,
    image: 'none',
    command: ['sh', '-c', script],
    maxRetries: 2,
    resources: { gpus: 0, cpuCores: 0, memoryMiB: 64 },
  });
  await waitFor(`${name} running`, async () => (await e2e.admin.getJob(job.id)).state === 'RUNNING' && existsSync(startedFile), {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  return { id: job.id, marker, release, alive: () => jobProcesses(job.id).length > 0 };
}

async function killAgent() {
  agent.kill('SIGKILL');
  await waitFor('the agent gone', () => !agent.running, { timeoutMs: 10_000, intervalMs: 20 });
}

/** Restarts the agent and waits until its beats have listed `jobId` for longer than the phantom grace. */
async function restartAgent(jobId?: string) {
  agent.start();
  const startedAt = Date.now();
  await agent.ready(120_000);
  if (!jobId) return;
  await waitFor(
    `the restarted agent listing ${jobId} for a phantom grace`,
    async () => {
      const t = (await e2e.admin.getNode(nodeId)).telemetry;
      return t != null && Date.parse(t.sentAt) > startedAt + PHANTOM_GRACE_MS * 1.5 && (t.running ?? []).some((r) => r.jobId === jobId);
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

async function ended(id: string) {
  return waitFor(
    `job ${id} ended`,
    async () => {
      const j = await e2e.admin.getJob(id);
      return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.state) ? j : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 200 },
  );
}

async function transitions(id: string) {
  return (await e2e.admin.jobEvents(id))
    .filter((e) => e.type === 'STATE_CHANGED')
    .map((e) => `${e.fromState}>${e.toState}:${e.attempt}${e.reason ? `:${e.reason}` : ''}`);
}

describe('an agent killed with kill -9', () => {
  it('during a run: the job keeps running, the restarted agent re-adopts it and reports its end; attempt 1, run once', async () => {
    const job = await markerJob(uniqueTag('through'));
    await killAgent();
    expect(job.alive()).toBe(true); // its process does not die with the agent
    await restartAgent(job.id);
    // The restarted agent lists it in its beats: still RUNNING at attempt 1 after a phantom grace would have judged it.
    expect(await e2e.admin.getJob(job.id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
    // Its log is followed as a live attempt's (ADR 0021): a follow opened now sees what the job
    // writes after it, and ends when it ends (an attempt the agent did not know was live would end
    // the follow at once, at what the file held).
    let followed = '';
    const follow = (async () => {
      for await (const chunk of e2e.admin.jobLogs(job.id, { follow: 'true' })) followed += chunk;
    })();
    await waitFor('the log followed', () => followed.includes('started\n'), { timeoutMs: 30_000, intervalMs: 50 });
    writeFileSync(job.release, '');
    expect(await ended(job.id)).toMatchObject({ state: 'SUCCEEDED', attempt: 1 });
    await follow;
    expect(followed).toBe('started\nreleased-1\n');
    expect(readFileSync(job.marker, 'utf8')).toBe('1\n');
    expect(await transitions(job.id)).toEqual(['QUEUED>SCHEDULED:1', 'SCHEDULED>RUNNING:1', 'RUNNING>SUCCEEDED:1']);
  });

  it('during a finish: the job ends while the agent is down, is reported once by the restarted agent and never runs again', async () => {
    const job = await markerJob(uniqueTag('finish'));
    await killAgent();
    writeFileSync(job.release, '');
    await waitFor('the job process ended', () => !job.alive(), { timeoutMs: 10_000, intervalMs: 20 });
    expect((await e2e.admin.getJob(job.id)).state).toBe('RUNNING'); // nobody has said otherwise yet
    await restartAgent();
    expect(await ended(job.id)).toMatchObject({ state: 'SUCCEEDED', attempt: 1 });
    // A second job placed after the first ended, run and finished on the same agent: by then any
    // repeated RUN of the first would have been handled (commands of one node are read in order).
    const after = await markerJob(uniqueTag('after'));
    writeFileSync(after.release, '');
    await ended(after.id);
    expect(readFileSync(job.marker, 'utf8')).toBe('1\n');
    expect(await transitions(job.id)).toEqual(['QUEUED>SCHEDULED:1', 'SCHEDULED>RUNNING:1', 'RUNNING>SUCCEEDED:1']);
  });

  it("keeps the deadline of an attempt it re-adopts, counted from the attempt's start", async () => {
    const name = uniqueTag('deadline');
    const marker = join(dir, `${name}.runs`);
    const { job } = await e2e.admin.createJob({
      name,
      image: 'none',
      maxRetries: 2,
      maxRuntimeSeconds: 12,
      resources: { gpus: 0, cpuCores: 0, memoryMiB: 64 },
      command: ['sh', '-c', `echo "$GANTRY_ATTEMPT" >> "${marker}"; exec sleep 600`],
    });
    const running = await waitFor(
      `${name} running`,
      async () => {
        const j = await e2e.admin.getJob(job.id);
        return j.state === 'RUNNING' && existsSync(marker) ? j : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    await killAgent();
    await new Promise((r) => setTimeout(r, 3_000)); // the agent stays down a while: a deadline counted from its restart would end 3 s later
    const restartedAt = Date.now();
    await restartAgent();
    const done = await ended(job.id);
    expect(done).toMatchObject({ state: 'FAILED', reason: 'DEADLINE_EXCEEDED', attempt: 1 });
    const finishedAt = Date.parse(done.finishedAt!);
    expect(finishedAt).toBeGreaterThanOrEqual(Date.parse(running.startedAt!) + 11_000);
    expect(finishedAt).toBeLessThan(restartedAt + 12_000);
    expect(readFileSync(marker, 'utf8')).toBe('1\n');
  });
});

describe('limits and images on this node', () => {
  it('ends a memory hog over its memoryMiB as FAILED OOM_KILLED (its own cgroup)', async () => {
    const { job } = await e2e.admin.createJob({
      name: uniqueTag('hog'),
      image: 'none',
      maxRetries: 2,
      resources: { gpus: 0, cpuCores: 1, memoryMiB: 64 },
      command: ['node', '-e', 'const a = []; for (;;) a.push(Buffer.alloc(8 << 20, 1));'],
    });
    expect(await ended(job.id)).toMatchObject({ state: 'FAILED', reason: 'OOM_KILLED', attempt: 1 });
  });

  it('refuses a job with an image when the node has no container runtime and its policy is refuse', async () => {
    const { job } = await e2e.admin.createJob({
      name: uniqueTag('img'),
      image: 'registry.example/pytorch:24.05',
      command: ['true'],
      resources: { gpus: 0, cpuCores: 0, memoryMiB: 64 },
    });
    expect(await ended(job.id)).toMatchObject({ state: 'FAILED', reason: 'IMAGE_UNSUPPORTED' });
  });
});
