import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack, waitFor } from '@gantry/stack';
import { HandAgent, TestStack, startTestStack } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Start timeout (contract §5.2, ADR 0035), tried from outside with a black-hole node: a node driven
 * by hand that beats, says it runs nothing, and never starts what it is sent. Its work is lost with
 * reason START_TIMEOUT once GANTRY_START_TIMEOUT_MS has passed (no retry used) and placed on the
 * stack's own simulated node, which runs it; after GANTRY_NODE_START_FAILURES (3) such timeouts in
 * a row it is cordoned with reason START_FAILURES and a node event, shown by GET /v1/nodes/{id} and
 * `gantry nodes describe`, until an operator's uncordon clears it.
 */
let e2e: TestStack;
let stack: Stack;
let admin: GatewayClient;
let hand: HandAgent;
let tag: string;
let beats: NodeJS.Timeout | null = null;
const START_TIMEOUT_MS = 5000;

jest.setTimeout(180_000);

beforeAll(async () => {
  e2e = await startTestStack({ suite: 'start-timeout', simNodes: 1, serviceEnv: { reconciler: { GANTRY_START_TIMEOUT_MS: String(START_TIMEOUT_MS) } } });
  ({ stack, tag } = e2e);
  admin = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  hand = new HandAgent(stack.gatewayUrl, e2e.adminToken);
});

afterAll(async () => {
  if (beats) clearInterval(beats);
  await hand?.close();
  await stack?.stop();
});

/**
 * A node with no GPUs and a little room: the best fit for a job without GPUs (the simulated node
 * has eight free), so placement prefers it whenever it may. It beats every second and runs nothing.
 */
async function blackHole(nodeId: string): Promise<void> {
  await hand.enrollWith({ cpuCores: 4, memoryMiB: 4096 }, nodeId);
  let seq = 0;
  const send = () =>
    hand.sendBeats([
      hand.message(nodeId, {
        nodeId,
        bootId: `${nodeId}-boot`,
        seq: ++seq,
        sentAt: Date.now(),
        zone: 'zone-h',
        rack: `rack-${tag}`,
        gpus: [],
        cpu: { cores: 4, utilization: 0 },
        memory: { totalMiB: 4096, usedMiB: 1 },
        running: [],
      }),
    ]);
  await send();
  beats = setInterval(() => void send().catch(() => undefined), 1000);
  await waitFor(
    'the black hole registered and heard',
    async () => {
      const r = await admin.request('GET', `/v1/nodes/${nodeId}`);
      return r.status === 200 && r.body.health === 'HEALTHY';
    },
    { timeoutMs: 60_000 },
  );
}

async function submit(name: string, command = ['true']): Promise<string> {
  // No retries: a start timeout must not use one.
  const r = await admin.request('POST', '/v1/jobs', {
    name,
    image: 'none',
    command,
    labels: { suite: tag },
    maxRetries: 0,
    resources: { gpus: 0, cpuCores: 1, memoryMiB: 64 },
  });
  expect(r.status).toBe(201);
  return r.body.id;
}

async function events(
  id: string,
): Promise<Array<{ type: string; at: string; fromState?: string; toState?: string; attempt?: number; nodeIds?: string[]; reason?: string }>> {
  return (await admin.request('GET', `/v1/jobs/${id}/events?limit=500`)).body.items;
}

async function succeeded(id: string): Promise<void> {
  await waitFor(`job ${id} SUCCEEDED`, async () => (await admin.request('GET', `/v1/jobs/${id}`)).body.state === 'SUCCEEDED', {
    timeoutMs: 90_000,
    intervalMs: 250,
  });
}

/** Runs the CLI as an operator would, against this stack. */
function gantry(args: string[]): Promise<{ code: number; stdout: string }> {
  const home = mkdtempSync(join(tmpdir(), 'gantry-cli-'));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(e2e.root, 'apps', 'cli', 'bin', 'gantry.js'), ...args], {
      cwd: e2e.root,
      env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: home, GANTRY_URL: stack.gatewayUrl, GANTRY_TOKEN: e2e.adminToken },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout }));
  });
}

describe('a black-hole node', () => {
  it('loses its work to another node once the start timeout has passed, and is cordoned after three in a row', async () => {
    const hole = `${tag}-hole`;
    const good = `${tag}-00000`;
    await blackHole(hole);

    // 1. One job: placed on the black hole (the best fit), lost there after the timeout, run elsewhere.
    const first = await submit('first');
    await succeeded(first);
    const trail = await events(first);
    const placed = trail.find((e) => e.toState === 'SCHEDULED' && e.attempt === 1)!;
    const lost = trail.find((e) => e.reason === 'START_TIMEOUT')!;
    expect(placed.nodeIds).toEqual([hole]);
    expect(lost).toMatchObject({ type: 'STATE_CHANGED', fromState: 'SCHEDULED', toState: 'QUEUED', attempt: 1, nodeIds: [hole] });
    // Not before the timeout; within it and a few beats (the judgement rides on the node's beats).
    const after = Date.parse(lost.at) - Date.parse(placed.at);
    expect(after).toBeGreaterThanOrEqual(START_TIMEOUT_MS);
    expect(after).toBeLessThan(START_TIMEOUT_MS + 10_000);
    // Placed again on the other node, though the black hole was free and the better fit; no retry used.
    expect(trail.find((e) => e.toState === 'SCHEDULED' && e.attempt === 2)!.nodeIds).toEqual([good]);
    expect((await admin.request('GET', `/v1/jobs/${first}`)).body).toMatchObject({ state: 'SUCCEEDED', attempt: 2 });
    expect((await admin.request('GET', `/v1/nodes/${hole}`)).body).toMatchObject({ cordoned: false, cordonReason: null, startFailures: 1 });

    // 2. Two more at once: both placed on it, both lost, the third failure in a row cordons it.
    const more = [await submit('second'), await submit('third')];
    for (const id of more) await succeeded(id);
    for (const id of more) {
      const t = await events(id);
      expect(t.find((e) => e.toState === 'SCHEDULED' && e.attempt === 1)!.nodeIds).toEqual([hole]);
      expect(t.find((e) => e.reason === 'START_TIMEOUT')).toMatchObject({ attempt: 1, nodeIds: [hole] });
    }
    const cordoned = (await admin.request('GET', `/v1/nodes/${hole}`)).body;
    expect(cordoned).toMatchObject({ cordoned: true, cordonReason: 'START_FAILURES', startFailures: 3 });
    const nodeEvents = (await admin.request('GET', `/v1/nodes/${hole}/events`)).body.items;
    expect(nodeEvents.filter((e: { type: string }) => e.type === 'CORDONED')).toEqual([
      expect.objectContaining({ type: 'CORDONED', reason: 'START_FAILURES' }),
    ]);

    // 3. What an operator sees, and the uncordon that clears it.
    const described = await gantry(['nodes', 'describe', hole]);
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/Cordoned: +yes \(START_FAILURES\)/);
    expect(described.stdout).toMatch(/Start failures: 3 in a row/);
    expect(described.stdout).toMatch(/CORDONED .*START_FAILURES/);
    const uncordoned = await admin.request('POST', `/v1/nodes/${hole}/uncordon`);
    expect(uncordoned.body).toMatchObject({ cordoned: false, cordonReason: null, startFailures: 0 });
  });

  it('never judges a rank its node started, however long it then runs', async () => {
    // The black hole out of the way: this job can only go to the simulated node, and runs past the timeout there.
    await admin.request('POST', `/v1/nodes/${tag}-hole/cordon`);
    const id = await submit('long-but-started', ['sh', '-c', `sleep ${(START_TIMEOUT_MS * 2) / 1000}`]);
    await succeeded(id);
    const trail = await events(id);
    expect(trail.some((e) => e.reason === 'START_TIMEOUT')).toBe(false);
    expect((await admin.request('GET', `/v1/jobs/${id}`)).body).toMatchObject({ state: 'SUCCEEDED', attempt: 1, nodeIds: [`${tag}-00000`] });
    expect((await admin.request('GET', `/v1/nodes/${tag}-00000`)).body).toMatchObject({ cordoned: false, startFailures: 0 });
  });
});
