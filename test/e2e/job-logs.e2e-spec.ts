import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack, waitFor } from '@gantry/stack';
import { TestStack, jobScratchDir, logGrantHeader, startTestStack, testSuite, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * GET /v1/jobs/{id}/logs (contract 4.4, ADR 0021) with a real agent on this machine: the job's
 * output is read from the node through the gateway, with the caller's rights; the agent serves it
 * only under a grant the control plane signed. The agent caps each log at 64 KiB here (checked
 * every 100 ms) so that the cap can be seen at work.
 */
let e2e: TestStack;
let stack: Stack;
let admin: GatewayClient;
// Jobs wait for release files here: a scratch path the sandboxed attempts may read (ADR 0033).
const dir = jobScratchDir('gantry-logs-e2e-');
const node = uniqueTag('logs-node');
const LOGS_PORT = testSuite('job-logs').basePort + 15;
const CAP = 64 * 1024;
/** The gateway's GANTRY_LOG_MAX_STREAMS here. */
const MAX_FOLLOWS = 2;

jest.setTimeout(180_000);

function fakeNvidiaSmi(): string {
  const csv = join(dir, 'gpus.csv');
  writeFileSync(csv, [0, 1].map((i) => `${i}, NVIDIA H100 80GB HBM3, 81559, 0, 0, P0`).join('\n') + '\n');
  const path = join(dir, 'nvidia-smi');
  writeFileSync(path, `#!/bin/sh\nexec cat '${csv}'\n`);
  chmodSync(path, 0o755);
  return path;
}

beforeAll(async () => {
  e2e = await startTestStack({
    suite: 'job-logs',
    simNodes: 0,
    fleetPrefix: node,
    serviceEnv: { 'api-gateway': { GANTRY_LOG_MAX_STREAMS: String(MAX_FOLLOWS) } },
    agentEnv: {
      GANTRY_NODE_ID: node,
      GANTRY_NVIDIA_SMI: fakeNvidiaSmi(),
      GANTRY_NODE_ADDRESS: '127.0.0.1',
      GANTRY_AGENT_LOGS_PORT: String(LOGS_PORT),
      GANTRY_TELEMETRY_EVERY: '1',
      GANTRY_AGENT_LOG_MAX_BYTES: String(CAP),
      GANTRY_AGENT_LOG_CAP_CHECK_MS: '100',
    },
  });
  stack = e2e.stack;
  admin = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
});

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A client for a fresh owner's user token, and the token. */
async function userClient(): Promise<GatewayClient & { secret: string }> {
  const owner = uniqueTag('team')
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '')
    .slice(0, 40);
  const { token } = await e2e.admin.createToken(owner, 'user');
  return Object.assign(new GatewayClient(stack.gatewayUrl, token), { secret: token });
}

async function submit(client: GatewayClient, name: string, script: string, gpus = 0): Promise<string> {
  const r = await client.request('POST', '/v1/jobs', {
    name,
    image: 'none',
    command: ['sh', '-c', script],
    env: { OUT: dir },
    resources: { gpus, cpuCores: 0, memoryMiB: 64 },
  });
  expect(r.status).toBe(201);
  return r.body.id;
}

async function waitForState(id: string, states: string[]) {
  return waitFor(
    `job ${id} in ${states.join('|')}`,
    async () => {
      const r = await admin.request('GET', `/v1/jobs/${id}`);
      return states.includes(r.body.state) ? r.body : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}

/** A follow: the body as it arrives, and whether it has ended. */
async function follow(token: string, path: string, signal?: AbortSignal) {
  const res = await fetch(`${stack.gatewayUrl}${path}`, { headers: { authorization: `Bearer ${token}` }, signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const state = { status: res.status, type: res.headers.get('content-type'), text: '', ended: false };
  const pump = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        state.text += decoder.decode(value, { stream: true });
      }
    } catch (e) {
      if (!signal?.aborted) throw e;
    }
    state.ended = true;
  })();
  return { state, pump };
}

describe('job logs through the gateway (real agent)', () => {
  let user: GatewayClient & { secret: string };
  let envJob: string;

  beforeAll(async () => {
    user = await userClient();
  });

  it('reads back what a job printed (its env, its GPU devices among it) for its owner and for operators, and is 404 for another owner', async () => {
    envJob = await submit(user, 'print-env', 'env | sort; echo printed-env', 1);
    const done = await waitForState(envJob, ['SUCCEEDED', 'FAILED']);
    expect(done.state).toBe('SUCCEEDED');
    const r = await user.request('GET', `/v1/jobs/${envJob}/logs`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(r.body).toContain(`GANTRY_JOB_ID=${envJob}`);
    expect(r.body).toContain(`GANTRY_NODE_ID=${node}`);
    expect(r.body).toContain(`CUDA_VISIBLE_DEVICES=${done.placements[0].gpuIndices.join(',')}`);
    expect(r.body).toMatch(/printed-env\n$/);
    // The same with every parameter spelled out, and for an operator.
    expect((await admin.request('GET', `/v1/jobs/${envJob}/logs?attempt=1&rank=0&follow=false`)).body).toBe(r.body);
    const stranger = await userClient();
    const other = await stranger.request('GET', `/v1/jobs/${envJob}/logs`);
    expect(other.status).toBe(404);
    expect(other.headers.get('content-type')).toMatch(/problem\+json/);
    expect((await stranger.request('GET', `/v1/jobs/${envJob}/logs?follow=true`)).status).toBe(404);
  });

  it('streams lines live with follow=true and ends the body when the attempt ends', async () => {
    const release = uniqueTag('release');
    const id = await submit(user, 'follow-me', `echo first-line; while [ ! -e "$OUT/${release}" ]; do sleep 0.1; done; echo last-line`);
    // A job not yet placed has no log (404): follow once it runs.
    await waitForState(id, ['RUNNING']);
    const f = await follow(user.secret, `/v1/jobs/${id}/logs?follow=true`);
    expect(f.state.status).toBe(200);
    expect(f.state.type).toMatch(/^text\/plain/);
    await waitFor('first-line followed', () => f.state.text.includes('first-line\n'), { timeoutMs: 60_000, intervalMs: 50 });
    // Live: the job is still running, the body still open, the last line not yet written.
    expect((await admin.request('GET', `/v1/jobs/${id}`)).body.state).toBe('RUNNING');
    expect(f.state.ended).toBe(false);
    expect(f.state.text).not.toContain('last-line');
    writeFileSync(join(dir, release), '');
    await waitFor('the follow to end', () => f.state.ended, { timeoutMs: 30_000, intervalMs: 50 });
    await f.pump;
    expect(f.state.text).toBe('first-line\nlast-line\n');
    expect((await waitForState(id, ['SUCCEEDED', 'FAILED'])).state).toBe('SUCCEEDED');
  });

  it('refuses a follow past GANTRY_LOG_MAX_STREAMS with 503 and Retry-After, and takes one again once a follower leaves', async () => {
    const release = uniqueTag('release');
    const id = await submit(user, 'many-followers', `echo hello; while [ ! -e "$OUT/${release}" ]; do sleep 0.1; done`);
    await waitForState(id, ['RUNNING']);
    const leaving = new AbortController();
    const followers = [await follow(user.secret, `/v1/jobs/${id}/logs?follow=true`, leaving.signal)];
    for (let i = 1; i < MAX_FOLLOWS; i++) followers.push(await follow(user.secret, `/v1/jobs/${id}/logs?follow=true`));
    expect(followers.map((f) => f.state.status)).toEqual(followers.map(() => 200));
    const refused = await user.request('GET', `/v1/jobs/${id}/logs?follow=true`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toMatch(/problem\+json/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Without follow a read is not a stream: it is served.
    expect((await user.request('GET', `/v1/jobs/${id}/logs`)).body).toBe('hello\n');
    leaving.abort();
    await followers[0].pump;
    const again = await waitFor(
      'a follow slot freed',
      async () => {
        const f = await follow(user.secret, `/v1/jobs/${id}/logs?follow=true`);
        if (f.state.status === 200) return f;
        await f.pump;
        return undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    writeFileSync(join(dir, release), '');
    for (const f of [...followers.slice(1), again]) {
      await f.pump;
      expect(f.state.text).toBe('hello\n');
    }
  });

  it('sends only the last tailLines lines', async () => {
    const id = await submit(user, 'many-lines', 'seq 1 500');
    await waitForState(id, ['SUCCEEDED']);
    expect((await user.request('GET', `/v1/jobs/${id}/logs?tailLines=3`)).body).toBe('498\n499\n500\n');
    expect((await user.request('GET', `/v1/jobs/${id}/logs?tailLines=1000`)).body.split('\n')).toHaveLength(501);
  });

  it.each([
    ['tailLines=0', 'tailLines'],
    ['tailLines=abc', 'tailLines'],
    ['rank=1', 'rank'],
    ['attempt=2', 'attempt'],
    ['attempt=0', 'attempt'],
    ['follow=yes', 'follow'],
    ['colour=red', 'colour'],
  ])('refuses %s with a 400 problem naming the parameter', async (query, field) => {
    const r = await user.request('GET', `/v1/jobs/${envJob}/logs?${query}`);
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/problem\+json/);
    expect(JSON.stringify(r.body)).toContain(field);
  });

  it("keeps the newest bytes of a log past GANTRY_AGENT_LOG_MAX_BYTES, from a line's start", async () => {
    // 20,000 lines of 11 bytes (220 kB), then time for the cap (checked every 100 ms) to act while the attempt runs.
    const id = await submit(user, 'chatty', "seq -f 'line-%05g' 0 19999; sleep 2");
    await waitForState(id, ['SUCCEEDED']);
    const body: string = (await user.request('GET', `/v1/jobs/${id}/logs`)).body;
    expect(body.length).toBeLessThanOrEqual(CAP);
    expect(body.length).toBeGreaterThan(CAP / 2);
    expect(body).toMatch(/^line-\d{5}\n/);
    expect(body.endsWith('line-19999\n')).toBe(true);
    const lines = body.trimEnd().split('\n');
    expect(lines.every((l, i) => i === 0 || Number(l.slice(5)) === Number(lines[i - 1].slice(5)) + 1)).toBe(true);
  });

  describe("the agent's log server", () => {
    const url = (jobId: string, attempt = 1) => `http://127.0.0.1:${LOGS_PORT}/v1/logs/${jobId}/${attempt}`;
    const signer = () => stack.secrets.commandSigningKey;
    const stranger = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const get = (u: string, authorization?: string) => fetch(u, authorization ? { headers: { authorization } } : {});

    it('serves a log under a grant the control plane signed for that attempt on its node', async () => {
      const r = await get(url(envJob), logGrantHeader(signer(), { jobId: envJob, attempt: 1, nodeId: node, exp: Date.now() + 30_000 }));
      expect(r.status).toBe(200);
      expect(await r.text()).toContain(`GANTRY_JOB_ID=${envJob}`);
    });

    it.each<[string, () => string | undefined, string?]>([
      ['no grant', () => undefined],
      ['a forged grant (signed with another key)', () => logGrantHeader(stranger, { jobId: envJob, attempt: 1, nodeId: node, exp: Date.now() + 30_000 })],
      ['an expired grant', () => logGrantHeader(signer(), { jobId: envJob, attempt: 1, nodeId: node, exp: Date.now() - 1 })],
      ['a grant for another node', () => logGrantHeader(signer(), { jobId: envJob, attempt: 1, nodeId: `${node}-other`, exp: Date.now() + 30_000 })],
      ['a grant for another attempt', () => logGrantHeader(signer(), { jobId: envJob, attempt: 2, nodeId: node, exp: Date.now() + 30_000 })],
    ])('refuses %s with 401 and no log', async (_name, grant) => {
      const r = await get(url(envJob), grant());
      expect(r.status).toBe(401);
      expect(await r.text()).not.toContain('GANTRY_JOB_ID');
    });
  });
});
