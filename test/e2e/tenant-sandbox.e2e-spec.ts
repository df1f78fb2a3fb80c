import { readlinkSync } from 'node:fs';
import { GantryClient } from '@gantry/client';
import { ServiceProcess, waitFor } from '@gantry/stack';
import { TestStack, startTestStack, testContainerRuntime, testEnv, uniqueTag } from '@gantry/testing';

/*
 * Contract 5.1 on the real stack (ADR 0033): a job is a tenant of its node, never the node. One
 * real agent (no simulated fleet) runs every job in its sandbox, and jobs with an image in podman
 * (a local busybox image). Users submit with plain user tokens; the jobs try what a hostile
 * tenant would, and say what they saw in their logs, read back through the API.
 */

let e2e: TestStack;
let agent: ServiceProcess;
const prefix = uniqueTag('tenant');
const nodeId = `${prefix}-node`;
const container = testContainerRuntime();

jest.setTimeout(180_000);

beforeAll(async () => {
  e2e = await startTestStack({
    suite: 'tenant-sandbox',
    simNodes: 0,
    fleetPrefix: prefix,
    agentEnv: { GANTRY_NODE_ID: nodeId, GANTRY_NVIDIA_SMI: '/nonexistent/nvidia-smi', GANTRY_AGENT_CONTAINER_RUNTIME: 'podman', ...container.env },
  });
  agent = e2e.stack.get('node-agent');
  await waitFor(`${nodeId} healthy`, async () => (await e2e.admin.getNode(nodeId).catch(() => null))?.health === 'HEALTHY', {
    timeoutMs: 60_000,
    intervalMs: 200,
  });
});

afterAll(async () => e2e?.stack.stop());

async function user(owner = uniqueTag('team')): Promise<GantryClient> {
  return e2e.clientFor((await e2e.admin.createToken(owner, 'user')).token);
}

/** Runs `script` as the client's job (sh), waits for its end, and returns its state and log. */
async function runJob(client: GantryClient, script: string, over: object = {}): Promise<{ state: string; log: string }> {
  const { job } = await client.createJob({
    name: 'tenant',
    image: 'none',
    command: ['sh', '-c', script],
    resources: { gpus: 0, cpuCores: 0, memoryMiB: 64 },
    ...over,
  });
  const done = await waitFor(
    `job ${job.id} ended`,
    async () => {
      const j = await client.getJob(job.id);
      return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.state) ? j : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  let log = '';
  for await (const chunk of client.jobLogs(job.id)) log += chunk;
  return { state: done.state, log };
}

describe('a job is a tenant, not its node', () => {
  it("runs as an unprivileged uid, never 0 and never the agent's; two owners' jobs on one node have different uids", async () => {
    const [a, b] = await Promise.all([runJob(await user(), 'id -u'), runJob(await user(), 'id -u')]);
    expect([a.state, b.state]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    const [uidA, uidB] = [Number(a.log.trim()), Number(b.log.trim())];
    expect(uidA).toBeGreaterThan(0);
    expect(uidA).not.toBe(process.getuid!()); // the agent runs as this test's user, root
    expect(uidB).not.toBe(uidA);
  });

  it("reads no agent secret: not from /proc, not from the agent's or the control plane's files, not from its env", async () => {
    const root = e2e.root;
    const script = [
      'cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n"',
      'env',
      `cat ${root}/.cache/secrets/* ${root}/.cache/kafka/data-*/credentials.json 2>&1`,
      `for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr "\\0" " "; echo; done`,
      'echo probe-done',
    ].join('; ');
    const { state, log } = await runJob(await user(), script);
    expect(state).toBe('SUCCEEDED');
    expect(log).toContain('probe-done');
    const secrets = [
      e2e.adminToken,
      e2e.stack.secrets.nodeCredentialSecret,
      e2e.stack.secrets.cursorSecret,
      e2e.stack.secrets.commandSigningKey.split('\n')[1],
      ...Object.values(testEnv.kafkaCredentials?.users ?? {}).map((u) => u.password),
    ].filter((s): s is string => typeof s === 'string' && s.length > 0);
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    for (const s of secrets) expect(log).not.toContain(s);
    expect(log).not.toMatch(/GANTRY_ENROLL_TOKEN|KAFKA_SASL_PASSWORD/);
  });

  it('cannot see or signal the agent: kill -9 -1 ends only the job', async () => {
    const pid = agent.pid!;
    const { log } = await runJob(await user(), `kill -0 ${pid} 2>/dev/null && echo AGENT-VISIBLE; echo procs=$(ls /proc | grep -c '^[0-9]'); kill -9 -1`);
    expect(log).not.toContain('AGENT-VISIBLE');
    expect(Number(/procs=(\d+)/.exec(log)![1])).toBeLessThanOrEqual(6);
    expect(agent.running).toBe(true);
    // The node still works: the next job runs.
    expect((await runJob(await user(), 'echo still-here')).log).toContain('still-here');
  });

  it("has its own /dev/shm and IPC namespace; a queue with hostIpc shares the host's", async () => {
    const hostIpc = readlinkSync('/proc/self/ns/ipc');
    const own = await runJob(await user(), 'readlink /proc/self/ns/ipc');
    expect(own.log.trim()).not.toBe(hostIpc);
    const queue = uniqueTag('ipc');
    await e2e.admin.createQueue(queue, 1, null, { hostIpc: true });
    const shared = await runJob(e2e.admin, 'readlink /proc/self/ns/ipc', { queue });
    expect(shared.log.trim()).toBe(hostIpc);
  });
});

describe('what a job sends never reaches the runtime or the agent', () => {
  it.each<[string, object, RegExp]>([
    ['an image that is a runtime option', { image: '--privileged' }, /image must be/],
    ['an image with a host mount in it', { image: '-v=/:/host' }, /image must be/],
    ['a variable the agent sets', { env: { CUDA_VISIBLE_DEVICES: '0' } }, /env may not set CUDA_VISIBLE_DEVICES/],
    ['a GANTRY_ variable', { env: { GANTRY_NODE_ID: 'elsewhere' } }, /env may not set GANTRY_NODE_ID/],
  ])('%s is refused with 400', async (_n, over, message) => {
    const r = await (await user()).request('POST', '/v1/jobs', { name: 'bad', image: 'none', command: ['true'], ...over });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toMatch(message);
  });

  it("a container job runs as the owner's uid, without capabilities, in its own IPC namespace", async () => {
    const hostIpc = readlinkSync('/proc/self/ns/ipc');
    const client = await user();
    const direct = await runJob(client, 'id -u');
    const { state, log } = await runJob(client, 'id -u; readlink /proc/self/ns/ipc; grep CapEff /proc/self/status; echo MINE=$MINE', {
      image: container.image,
      env: { MINE: 'mine' },
    });
    expect(state).toBe('SUCCEEDED');
    const [uid, ipc, caps, mine] = log.trim().split('\n');
    expect(Number(uid)).toBeGreaterThan(0);
    expect(uid).toBe(direct.log.trim());
    expect(ipc).not.toBe(hostIpc);
    expect(caps).toMatch(/^CapEff:\s+0+$/);
    expect(mine).toBe('MINE=mine');
  });
});
