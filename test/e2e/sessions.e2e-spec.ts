import { Agent, request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { waitFor } from '@gantry/stack';
import { TestStack, startTestStack, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Sessions at the gateway (contract §5.3, ADR 0036), against two gateway replicas: a stream ends
 * within 1 s of its token's revocation or expiry, on either replica; a token holds at most
 * GANTRY_STREAMS_PER_TOKEN streams (events and log follows together) across both; a request
 * without a valid token is refused before the door for creates, within a budget per client
 * address. Clients on other loopback addresses (127.0.0.x) stand for other hosts.
 */
let e2e: TestStack;
let gateways: string[];
let admin: GatewayClient;

/** The default GANTRY_STREAMS_PER_TOKEN and GANTRY_ANON_RATE_LIMIT_RPS: the suite runs with both. */
const STREAMS_PER_TOKEN = 32;
const ANON_RPS = 20;
/** The door for creates here: at most this many in progress per replica (fixed: min = max). */
const DOOR = 4;

jest.setTimeout(240_000);

beforeAll(async () => {
  e2e = await startTestStack({
    suite: 'sessions',
    simNodes: 1,
    replicas: { 'api-gateway': 2 },
    serviceEnv: {
      'api-gateway': { GANTRY_CREATE_LATENCY_TARGET_MS: '200', GANTRY_CREATE_INFLIGHT_MIN: String(DOOR), GANTRY_CREATE_INFLIGHT_MAX: String(DOOR) },
    },
  });
  gateways = e2e.stack.all('api-gateway').map((g) => g.url);
  admin = new GatewayClient(gateways[0], e2e.adminToken);
});
afterAll(async () => {
  await e2e?.stack.stop();
});

/** A user token, minted through `via` (the first replica unless said): known there at once, on the other replica after its next token sync. */
async function mint(expiresAt?: Date, via = gateways[0]): Promise<{ id: string; token: string; owner: string }> {
  const owner = uniqueTag('team').toLowerCase();
  const r = await new GatewayClient(via, e2e.adminToken).request('POST', '/v1/tokens', {
    owner,
    role: 'user',
    ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
  });
  expect(r.status).toBe(201);
  return { id: r.body.id, token: r.body.token, owner };
}

/** An open stream (SSE or a log follow): when and how its body ended, and a way to drop it. */
interface OpenStream {
  status: number;
  problem: any;
  retryAfter: string | null;
  ended: Promise<{ at: number; clean: boolean }>;
  close(): void;
}

/** How `s` ended, or 'open' if it had not ended `ms` after `from`: a test of an end within 1 s fails in seconds, not at Jest's timeout. */
async function endOf(s: OpenStream, from: number, ms = 5_000): Promise<{ at: number; clean: boolean } | 'open'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'open'>((r) => (timer = setTimeout(() => r('open'), Math.max(0, from + ms - Date.now()))));
  try {
    return await Promise.race([s.ended, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function openStream(base: string, token: string, path = '/v1/events?follow=true'): Promise<OpenStream> {
  const abort = new AbortController();
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream, text/plain' }, signal: abort.signal });
  if (!res.ok) {
    return {
      status: res.status,
      problem: await res.json(),
      retryAfter: res.headers.get('retry-after'),
      ended: Promise.resolve({ at: Date.now(), clean: true }),
      close: () => undefined,
    };
  }
  const reader = res.body!.getReader();
  const ended = (async () => {
    try {
      for (;;) if ((await reader.read()).done) return { at: Date.now(), clean: true };
    } catch {
      return { at: Date.now(), clean: false };
    }
  })();
  return { status: res.status, problem: null, retryAfter: null, ended, close: () => abort.abort() };
}

/** A job that runs until cancelled, RUNNING before this returns. */
async function runningJob(token: string): Promise<string> {
  const user = new GatewayClient(gateways[0], token);
  const r = await user.request('POST', '/v1/jobs', {
    name: 'long',
    image: 'none',
    command: ['sh', '-c', 'echo started; sleep 600'],
    resources: { gpus: 0, cpuCores: 0, memoryMiB: 16 },
  });
  expect(r.status).toBe(201);
  await waitFor(`job ${r.body.id} RUNNING`, async () => (await admin.request('GET', `/v1/jobs/${r.body.id}`)).body.state === 'RUNNING', {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  return r.body.id;
}

/** A request from the loopback address `from` (127.0.0.x stands for another host), through `agent`. */
function send(
  agent: Agent,
  from: string,
  url: string,
  opts: { method: string; token?: string; body?: string },
): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent,
        localAddress: from,
        method: opts.method,
        headers: { ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...(opts.body ? { 'content-type': 'application/json' } : {}) },
        timeout: 30_000,
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined }));
      },
    );
    req.once('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.once('error', reject);
    req.end(opts.body);
  });
}

/** A job that can never be placed: it stays QUEUED and costs nothing after its create. */
const parked = JSON.stringify({ name: 'parked', image: 'none', command: ['true'], resources: { gpus: 1, gpuModel: 'NEVER-GPU', cpuCores: 1, memoryMiB: 1 } });

describe('streams end with their token', () => {
  it("ends a revoked token's event streams (job and all-jobs) and log follow, on both replicas, within 1 s; a new one is 401", async () => {
    const t = await mint();
    const job = await runningJob(t.token);
    try {
      const streams = [
        await openStream(gateways[0], t.token),
        await openStream(gateways[1], t.token),
        await openStream(gateways[1], t.token, `/v1/jobs/${job}/events?follow=true`),
        await openStream(gateways[1], t.token, `/v1/jobs/${job}/logs?follow=true`),
      ];
      expect(streams.map((s) => s.status)).toEqual([200, 200, 200, 200]);
      // Revoked through the first replica: the second learns it from its token sync.
      expect((await admin.request('DELETE', `/v1/tokens/${t.id}`)).status).toBe(204);
      const revokedAt = Date.now();
      const ends = await Promise.all(streams.map((s) => endOf(s, revokedAt)));
      for (const end of ends) {
        expect(end).toEqual({ at: expect.any(Number), clean: true });
        if (end !== 'open') expect(end.at - revokedAt).toBeLessThan(1_000);
      }
      for (const g of gateways) {
        const again = await openStream(g, t.token);
        expect(again.status).toBe(401);
        expect(again.problem.detail).toBe('token revoked');
      }
    } finally {
      await admin.request('POST', `/v1/jobs/${job}/cancel`);
    }
  });

  it("ends an expiring token's streams within 1 s of its expiry, on both replicas, and not before", async () => {
    const expiresAt = new Date(Date.now() + 4_000);
    const t = await mint(expiresAt);
    const streams = await Promise.all(gateways.map((g) => openStream(g, t.token)));
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    for (const end of await Promise.all(streams.map((s) => endOf(s, expiresAt.getTime())))) {
      expect(end).toEqual({ at: expect.any(Number), clean: true });
      if (end === 'open') continue;
      expect(end.at).toBeGreaterThanOrEqual(expiresAt.getTime());
      expect(end.at - expiresAt.getTime()).toBeLessThan(1_000);
    }
    expect((await openStream(gateways[1], t.token)).status).toBe(401);
  });
});

describe('streams per token', () => {
  it(`refuses a token's stream past its ${STREAMS_PER_TOKEN} open ones with 429 across both replicas, events and log follows together, while another token still opens streams`, async () => {
    const a = await mint();
    const job = await runningJob(a.token);
    const open: OpenStream[] = [];
    try {
      // 31 event streams over both replicas and one log follow: the token's 32.
      for (let i = 0; i < STREAMS_PER_TOKEN - 1; i++) open.push(await openStream(gateways[i % 2], a.token));
      open.push(await openStream(gateways[0], a.token, `/v1/jobs/${job}/logs?follow=true`));
      expect(open.map((s) => s.status)).toEqual(open.map(() => 200));

      const refused = [
        await openStream(gateways[0], a.token),
        await openStream(gateways[1], a.token, `/v1/jobs/${job}/events?follow=true`),
        await openStream(gateways[1], a.token, `/v1/jobs/${job}/logs?follow=true`),
      ];
      for (const r of refused) {
        expect(r.status).toBe(429);
        expect(r.problem).toMatchObject({ type: 'https://gantry.dev/problems/rate-limited', status: 429 });
        expect(r.problem.detail).toMatch(/GANTRY_STREAMS_PER_TOKEN/);
        expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      }
      // Another token is not held back by a's streams.
      const b = await mint();
      const others = await Promise.all(gateways.map((g) => openStream(g, b.token)));
      expect(others.map((s) => s.status)).toEqual([200, 200]);
      for (const s of others) s.close();

      // A stream closed by its client gives its place back.
      open.shift()!.close();
      const next = await waitFor(
        'a place freed by a closed stream',
        async () => {
          const s = await openStream(gateways[1], a.token);
          return s.status === 200 ? s : undefined;
        },
        { timeoutMs: 5_000, intervalMs: 100 },
      );
      open.push(next);
    } finally {
      for (const s of open) s.close();
      await admin.request('POST', `/v1/jobs/${job}/cancel`);
    }
  });
});

describe('requests without a valid token', () => {
  it(`are limited per client address: ${ANON_RPS} at once, then 429 with Retry-After; another address and a valid token are not held back`, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 32 });
    try {
      const url = `${gateways[1]}/v1/queues`;
      const t0 = performance.now();
      const answers = await Promise.all(
        Array.from({ length: ANON_RPS + 10 }, (_, i) =>
          send(agent, '127.0.0.50', url, { method: 'GET', token: i % 2 ? undefined : `gnt_${randomBytes(16).toString('hex')}` }),
        ),
      );
      const elapsedS = (performance.now() - t0) / 1000;
      const refused = answers.filter((a) => a.status === 401);
      const limited = answers.filter((a) => a.status === 429);
      expect(refused.length + limited.length).toBe(answers.length);
      // The burst, plus what refilled while they were answered (20/s).
      expect(refused.length).toBeGreaterThanOrEqual(ANON_RPS);
      expect(refused.length).toBeLessThanOrEqual(ANON_RPS + Math.ceil(elapsedS * ANON_RPS));
      expect(limited.length).toBeGreaterThan(0);
      for (const l of limited) expect(Number(l.retryAfter)).toBeGreaterThanOrEqual(1);
      expect((await send(agent, '127.0.0.51', url, { method: 'GET' })).status).toBe(401);
      // Minted through this replica: a valid token it knows never spends the address's budget.
      const valid = await mint(undefined, gateways[1]);
      expect((await send(agent, '127.0.0.50', url, { method: 'GET', token: valid.token })).status).toBe(200);
    } finally {
      agent.destroy();
    }
  });

  it("a flood of them from many addresses gets 401 and 429, and turns none of a real user's creates into a 503", async () => {
    const user = await mint();
    const gateway = gateways[0];
    // Warm the user's token on this replica (it was minted here, so it is known already).
    expect((await send(new Agent(), '127.0.0.1', `${gateway}/v1/queues`, { method: 'GET', token: user.token })).status).toBe(200);

    // Open loop: FLOOD requests at RATE a second, each from one of ADDRESSES addresses in turn,
    // sent at its scheduled time whatever is still outstanding; a third carry no token, the rest
    // a fresh random one (each must be looked up: no answer is remembered for it).
    const FLOOD = 4_000;
    const RATE = 2_000;
    const ADDRESSES = 40;
    const agents = Array.from({ length: ADDRESSES }, () => new Agent({ keepAlive: true, maxSockets: 8 }));
    const userAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const flood: Array<Promise<{ status: number; retryAfter: string | undefined }>> = [];
      let flooding = true;
      // The real user: one create after another, from its own address, with its own token. It
      // never has more than one in progress, so only others could fill the door.
      const creates = (async () => {
        const answers: Array<{ status: number }> = [];
        while (flooding) answers.push(await send(userAgent, '127.0.0.1', `${gateway}/v1/jobs`, { method: 'POST', body: parked, token: user.token }));
        return answers;
      })();
      const t0 = performance.now();
      for (let sent = 0; sent < FLOOD;) {
        const due = Math.min(FLOOD, Math.floor(((performance.now() - t0) * RATE) / 1000));
        for (; sent < due; sent++) {
          const k = sent % ADDRESSES;
          flood.push(
            send(agents[k], `127.0.1.${k + 1}`, `${gateway}/v1/jobs`, {
              method: 'POST',
              body: parked,
              token: sent % 3 === 0 ? undefined : `gnt_${randomBytes(24).toString('base64url')}`,
            }),
          );
        }
        await new Promise((r) => setImmediate(r));
      }
      const floodAnswers = await Promise.all(flood);
      flooding = false;
      const createAnswers = await creates;

      const count = (xs: Array<{ status: number }>) => xs.reduce<Record<number, number>>((m, x) => ({ ...m, [x.status]: (m[x.status] ?? 0) + 1 }), {});
      expect(count(createAnswers)).toEqual({ 201: createAnswers.length });
      expect(createAnswers.length).toBeGreaterThanOrEqual(3);
      const byStatus = count(floodAnswers);
      expect(Object.keys(byStatus).sort()).toEqual(['401', '429']);
      // Each address's burst is refused with 401 at least; what comes faster than its budget, 429.
      expect(byStatus[401]).toBeGreaterThanOrEqual(ADDRESSES * ANON_RPS);
      expect(byStatus[429]).toBeGreaterThan(0);
    } finally {
      for (const a of [...agents, userAgent]) a.destroy();
    }
  });
});
