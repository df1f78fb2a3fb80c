import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceProcess, Stack, waitFor } from '@gantry/stack';
import { jobProcesses, jobScratchDir, startTestStack, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Contract 4.4 with real agents on this machine (ADR 0019). Each agent is a real one (no simulated
 * fleet: GANTRY_SIM_NODES=0, process executor) whose GPU inventory comes from a fake nvidia-smi
 * (GANTRY_NVIDIA_SMI): a script that prints the CSV file this test writes, eight "H100"s. A job
 * prints its environment and writes it to a file in a directory this test owns; the test reads it
 * back from the file and, through GET /v1/jobs/{id}/logs, from the agent that ran the rank (ADR 0021).
 */

let stack: Stack;
let api: GatewayClient;
let extra: ServiceProcess;
// Jobs write their env here: a scratch path the sandboxed attempts may write (ADR 0033).
const dir = jobScratchDir('gantry-gpu-e2e-');
const prefix = uniqueTag('gpu');
const nodeA = `${prefix}-a`;
const nodeB = `${prefix}-b`;
const ADDRESS: Record<string, string> = { [nodeA]: '127.0.0.1', [nodeB]: '127.0.0.2' };

jest.setTimeout(180_000);

/** nvidia-smi's CSV (index, name, memory.total, memory.used, utilization.gpu, pstate) for eight GPUs; `unhealthy` cannot be read. */
function inventory(node: string, unhealthy: number[] = []): void {
  const lines = Array.from({ length: 8 }, (_, i) =>
    unhealthy.includes(i) ? `${i}, NVIDIA H100 80GB HBM3, [N/A], [N/A], [N/A], P0` : `${i}, NVIDIA H100 80GB HBM3, 81559, 0, 0, P0`,
  );
  writeFileSync(join(dir, `${node}.csv`), `${lines.join('\n')}\n`);
}

function fakeNvidiaSmi(node: string): string {
  const path = join(dir, `${node}-nvidia-smi`);
  writeFileSync(path, `#!/bin/sh\nexec cat '${join(dir, `${node}.csv`)}'\n`);
  chmodSync(path, 0o755);
  inventory(node);
  return path;
}

/** A real agent's env: its node, its fake GPUs, its address; telemetry in every beat so health changes show within a beat. */
const agentEnv = (node: string) => ({
  GANTRY_NODE_ID: node,
  GANTRY_NVIDIA_SMI: fakeNvidiaSmi(node),
  GANTRY_NODE_ADDRESS: ADDRESS[node],
  GANTRY_TELEMETRY_EVERY: '1',
});

beforeAll(async () => {
  const e2e = await startTestStack({ suite: 'gpu-devices', simNodes: 0, fleetPrefix: prefix, agentEnv: agentEnv(nodeA) });
  stack = e2e.stack;
  api = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  extra = e2e.extraAgent('gpu-agent-b', { nodes: 0, prefix: `${prefix}-agent-b` }, agentEnv(nodeB));
  extra.start();
  await extra.ready(60_000);
  for (const id of [nodeA, nodeB]) await gpusOf(id, 8);
});

afterAll(async () => {
  await extra?.stop();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Waits until the node is registered with `total` usable GPUs. */
async function gpusOf(id: string, total: number) {
  await waitFor(
    `${id} with ${total} usable GPUs`,
    async () => {
      const r = await api.request('GET', `/v1/nodes/${id}`);
      return r.status === 200 && r.body.gpus.total === total && r.body.health === 'HEALTHY';
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

async function cordon(id: string, on: boolean) {
  expect((await api.request('POST', `/v1/nodes/${id}/${on ? 'cordon' : 'uncordon'}`)).status).toBe(200);
}

/** Writes its env to `<dir>/<name>-<RANK>.env`, then waits for `<dir>/<release>` (when given) before exiting 0. */
function envJob(name: string, gpus: number, extra: object = {}, release?: string) {
  const wait = release ? `while [ ! -e "$OUT/${release}" ]; do sleep 0.2; done` : 'true';
  return {
    name,
    image: 'none',
    command: ['sh', '-c', `env | tee "$OUT/${name}-$RANK.env.tmp" && mv "$OUT/${name}-$RANK.env.tmp" "$OUT/${name}-$RANK.env"; ${wait}`],
    env: { OUT: dir },
    resources: { gpus, gpuModel: 'H100', cpuCores: 0, memoryMiB: 64 },
    ...extra,
  };
}

async function submit(body: object): Promise<string> {
  const r = await api.request('POST', '/v1/jobs', body);
  expect(r.status).toBe(201);
  return r.body.id;
}

async function waitForState(id: string, states: string[], timeoutMs = 60_000) {
  return waitFor(
    `job ${id} in ${states.join('|')}`,
    async () => {
      const r = await api.request('GET', `/v1/jobs/${id}`);
      return states.includes(r.body.state) ? r.body : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/** The env a job's rank wrote, once it has. */
async function envOf(name: string, rank = 0): Promise<Record<string, string>> {
  const file = join(dir, `${name}-${rank}.env`);
  await waitFor(`${file} written`, () => existsSync(file), { timeoutMs: 60_000, intervalMs: 100 });
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

const devices = (v: string) => (v === '' ? [] : v.split(',').map(Number));

/** One variable of the env a rank printed, as its log (read through the gateway from the rank's node) shows it. */
async function loggedVar(id: string, variable: string, rank = 0): Promise<string | undefined> {
  const r = await api.request('GET', `/v1/jobs/${id}/logs?rank=${rank}`);
  expect(r.status).toBe(200);
  const line = String(r.body)
    .split('\n')
    .find((l) => l.startsWith(`${variable}=`));
  return line?.slice(variable.length + 1);
}

describe('GPU devices on real agents (fake 8-GPU inventories)', () => {
  it('gives two 4-GPU jobs on one 8-GPU node disjoint device sets, as their env and the job resource say', async () => {
    await cordon(nodeB, true);
    const release = join(dir, uniqueTag('release'));
    try {
      const names = [uniqueTag('four'), uniqueTag('four')];
      const ids = await Promise.all(names.map((n) => submit(envJob(n, 4, {}, release.slice(dir.length + 1)))));
      // Both running at once: each holds its devices while the other starts.
      const envs = await Promise.all(names.map((n) => envOf(n)));
      const jobs = await Promise.all(ids.map((id) => waitForState(id, ['RUNNING'])));
      const sets = envs.map((e) => devices(e.CUDA_VISIBLE_DEVICES));
      expect(sets.map((s) => s.length)).toEqual([4, 4]);
      expect(new Set([...sets[0], ...sets[1]])).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7]));
      envs.forEach((e, i) => {
        expect(e.NVIDIA_VISIBLE_DEVICES).toBe(e.CUDA_VISIBLE_DEVICES);
        expect(jobs[i].placements).toEqual([{ rank: 0, nodeId: nodeA, gpuIndices: sets[i] }]);
      });
      // The same devices, as each job printed them, read back through the logs route while they run.
      expect(await Promise.all(ids.map((id) => loggedVar(id, 'CUDA_VISIBLE_DEVICES')))).toEqual(sets.map((s) => s.join(',')));
      writeFileSync(release, '');
      for (const id of ids) expect((await waitForState(id, ['SUCCEEDED', 'FAILED', 'CANCELLED'])).state).toBe('SUCCEEDED');
    } finally {
      // Even when an expectation failed: the jobs end and give their devices back to the next tests.
      writeFileSync(release, '');
      await cordon(nodeB, false);
    }
  });

  it('never assigns a GPU its node reports unhealthy', async () => {
    await cordon(nodeB, true);
    inventory(nodeA, [2]);
    try {
      await gpusOf(nodeA, 7);
      const name = uniqueTag('seven');
      const id = await submit(envJob(name, 7));
      const env = await envOf(name);
      expect(devices(env.CUDA_VISIBLE_DEVICES)).toEqual([0, 1, 3, 4, 5, 6, 7]);
      const done = await waitForState(id, ['SUCCEEDED', 'FAILED', 'CANCELLED']);
      expect(done).toMatchObject({ state: 'SUCCEEDED', placements: [{ rank: 0, nodeId: nodeA, gpuIndices: [0, 1, 3, 4, 5, 6, 7] }] });

      // Eight GPUs cannot be had while one is unhealthy: the job waits, and runs once the GPU recovers.
      const whole = uniqueTag('eight');
      const wholeId = await submit(envJob(whole, 8));
      await waitFor('the 8-GPU job waiting with a reason', async () => (await api.request('GET', `/v1/jobs/${wholeId}`)).body.pendingReason ?? undefined, {
        timeoutMs: 30_000,
      });
      expect((await api.request('GET', `/v1/jobs/${wholeId}`)).body.state).toBe('QUEUED');
      inventory(nodeA);
      await gpusOf(nodeA, 8);
      expect(devices((await envOf(whole)).CUDA_VISIBLE_DEVICES)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      await waitForState(wholeId, ['SUCCEEDED']);
    } finally {
      inventory(nodeA);
      await cordon(nodeB, false);
    }
  });
});

describe('a gang on two real agents', () => {
  it("gives its ranks RANK 0 and 1 and the same WORLD_SIZE, MASTER_ADDR (rank 0's node address) and MASTER_PORT", async () => {
    const name = uniqueTag('gang');
    const id = await submit(envJob(name, 1, { nodes: 2 }));
    const done = await waitForState(id, ['SUCCEEDED', 'FAILED', 'CANCELLED']);
    expect(done.state).toBe('SUCCEEDED');
    const [r0, r1] = [await envOf(name, 0), await envOf(name, 1)];
    expect(new Set(done.nodeIds)).toEqual(new Set([nodeA, nodeB]));
    expect([r0.RANK, r1.RANK]).toEqual(['0', '1']);
    for (const [rank, e] of [r0, r1].entries()) {
      expect(e).toMatchObject({
        WORLD_SIZE: '2',
        LOCAL_RANK: '0',
        MASTER_ADDR: ADDRESS[done.nodeIds[0]],
        MASTER_PORT: r0.MASTER_PORT,
        GANTRY_JOB_ID: id,
        GANTRY_ATTEMPT: '1',
        GANTRY_NODE_ID: done.nodeIds[rank],
        GANTRY_NODE_IDS: done.nodeIds.join(','),
        CUDA_VISIBLE_DEVICES: done.placements[rank].gpuIndices.join(','),
      });
    }
    expect(Number(r0.MASTER_PORT)).toBe(29500 + Math.min(...done.placements[0].gpuIndices));
    // Each rank's log, from its own node's agent: its RANK, and the MASTER_ADDR they agree on.
    for (const rank of [0, 1]) {
      expect(await loggedVar(id, 'RANK', rank)).toBe(String(rank));
      expect(await loggedVar(id, 'MASTER_ADDR', rank)).toBe(ADDRESS[done.nodeIds[0]]);
      expect(await loggedVar(id, 'GANTRY_NODE_ID', rank)).toBe(done.nodeIds[rank]);
    }
  });
});

describe('maxRuntimeSeconds', () => {
  it('refuses a deadline that is not a positive whole number of seconds', async () => {
    for (const bad of [0, -1, 1.5, '2']) {
      const r = await api.request('POST', '/v1/jobs', { ...envJob('bad', 0), maxRuntimeSeconds: bad });
      expect([bad, r.status, [...new Set(r.body.errors?.map((e: { field: string }) => e.field))]]).toEqual([bad, 400, ['maxRuntimeSeconds']]);
    }
  });

  it('kills an attempt still running at its deadline: FAILED, DEADLINE_EXCEEDED, the process gone', async () => {
    const id = await submit({
      name: 'deadline',
      image: 'none',
      command: ['sh', '-c', 'exec sleep 600'],
      resources: { gpus: 0, cpuCores: 0, memoryMiB: 64 },
      maxRuntimeSeconds: 2,
    });
    const running = await waitForState(id, ['RUNNING']);
    expect(running.maxRuntimeSeconds).toBe(2);
    await waitFor('its process', () => jobProcesses(id).length > 0, { timeoutMs: 10_000 });
    const done = await waitForState(id, ['SUCCEEDED', 'FAILED', 'CANCELLED'], 30_000);
    expect(done).toMatchObject({ state: 'FAILED', reason: 'DEADLINE_EXCEEDED', attempt: 1 });
    expect(Date.parse(done.finishedAt) - Date.parse(done.startedAt)).toBeGreaterThanOrEqual(1_500);
    expect(jobProcesses(id)).toEqual([]);
  });
});
