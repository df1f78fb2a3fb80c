import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { waitFor } from '@gantry/stack';
import { HandAgent, TestStack, openDataSource, startTestStack, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Lifecycles (contract §4.3) against two gateway replicas: tokens (expiry, listing, revocation
 * everywhere within a second), queues (allowedOwners, deletion), nodes (removal), the audit log,
 * job retention, and no job ids for users.
 */

let e2e: TestStack;
let ds: DataSource;
let gateways: string[];
let admin: GatewayClient;
let hand: HandAgent;

const RETENTION_MS = 4000;
const SIM_NODES = 2;

jest.setTimeout(180_000);

beforeAll(async () => {
  e2e = await startTestStack({
    suite: 'gateway-lifecycles',
    simNodes: SIM_NODES,
    replicas: { 'api-gateway': 2 },
    env: { GANTRY_JOB_RETENTION_MS: String(RETENTION_MS), GANTRY_IDEMPOTENCY_TTL_MS: '1000', GANTRY_RETENTION_SWEEP_MS: '500' },
  });
  gateways = e2e.stack.all('api-gateway').map((g) => g.url);
  admin = new GatewayClient(gateways[0], e2e.adminToken);
  ds = await openDataSource();
  hand = new HandAgent(gateways[0], e2e.adminToken);
});
afterAll(async () => {
  await hand?.close();
  await ds?.destroy();
  await e2e?.stack.stop();
});

async function mint(owner: string, extra: object = {}): Promise<{ id: string; token: string; body: any }> {
  const r = await admin.request('POST', '/v1/tokens', { owner, role: 'user', ...extra });
  expect(r.status).toBe(201);
  return { id: r.body.id, token: r.body.token, body: r.body };
}

const parked = (over: object = {}) => ({
  name: 'parked',
  image: 'none',
  command: ['true'],
  resources: { gpus: 1, gpuModel: 'NEVER-GPU', cpuCores: 1, memoryMiB: 1 },
  ...over,
});

async function auditSince(id: number): Promise<any[]> {
  const r = await admin.request('GET', '/v1/audit?limit=500');
  expect(r.status).toBe(200);
  return r.body.items.filter((e: any) => e.id > id);
}

async function lastAuditId(): Promise<number> {
  return (await admin.request('GET', '/v1/audit?limit=1')).body.items[0]?.id ?? 0;
}

describe('tokens', () => {
  it('mints with a description and an expiry, lists without secrets (paged), and refuses the token once expired', async () => {
    const owner = uniqueTag('team');
    const expiresAt = new Date(Date.now() + 3000).toISOString();
    const t = await mint(owner, { description: 'ci pipeline', expiresAt });
    expect(t.body).toMatchObject({ owner, role: 'user', description: 'ci pipeline', expiresAt, revokedAt: null, token: expect.stringMatching(/^gnt_/) });
    const user = new GatewayClient(gateways[1], t.token);
    expect((await user.request('GET', '/v1/queues')).status).toBe(200);

    const listed: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await admin.request('GET', `/v1/tokens?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      listed.push(...page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(listed.filter((x) => x.id === t.id)).toEqual([
      { id: t.id, owner, role: 'user', description: 'ci pipeline', createdAt: expect.any(String), expiresAt, revokedAt: null },
    ]);
    expect(JSON.stringify(listed)).not.toContain(t.token);
    expect(new Set(listed.map((x) => x.id)).size).toBe(listed.length);

    await waitFor('the token expired', async () => (await user.request('GET', '/v1/queues')).status === 401, { timeoutMs: 10_000 });
    expect((await user.request('GET', '/v1/queues')).body.detail).toBe('token expired');
  });

  it.each([
    [{ owner: 'x', role: 'user', expiresAt: new Date(Date.now() - 1000).toISOString() }, 'expiresAt'],
    [{ owner: 'x', role: 'user', expiresAt: '2030-01-01' }, 'expiresAt'],
    [{ owner: 'x', role: 'user', description: 'd'.repeat(257) }, 'description'],
  ])('refuses a bad token request %j naming %s', async (body, field) => {
    const r = await admin.request('POST', '/v1/tokens', body);
    expect(r.status).toBe(400);
    expect(r.body.errors.map((e: any) => e.field)).toContain(field);
  });

  it('revokes: both replicas refuse the token within a second; repeating it is harmless; users may not list or revoke', async () => {
    const t = await mint(uniqueTag('team'));
    const onEach = gateways.map((g) => new GatewayClient(g, t.token));
    for (const c of onEach) expect((await c.request('GET', '/v1/queues')).status).toBe(200);
    expect((await onEach[0].request('GET', '/v1/tokens')).status).toBe(403);
    expect((await onEach[0].request('DELETE', `/v1/tokens/${t.id}`)).status).toBe(403);

    const revokedAt = Date.now();
    expect((await new GatewayClient(gateways[0], e2e.adminToken).request('DELETE', `/v1/tokens/${t.id}`)).status).toBe(204);
    const refusedWithin = await Promise.all(
      onEach.map((c) =>
        waitFor(
          'refused',
          async () => {
            const r = await c.request('GET', '/v1/queues');
            return r.status === 401 ? Date.now() - revokedAt : undefined;
          },
          { timeoutMs: 5000, intervalMs: 20 },
        ),
      ),
    );
    expect(Math.max(...refusedWithin)).toBeLessThan(1000);
    expect((await onEach[1].request('GET', '/v1/queues')).body.detail).toBe('token revoked');

    expect((await admin.request('DELETE', `/v1/tokens/${t.id}`)).status).toBe(204);
    expect((await admin.request('DELETE', `/v1/tokens/${randomUUID()}`)).status).toBe(404);
    expect((await admin.request('DELETE', '/v1/tokens/not-a-uuid')).status).toBe(404);
  });

  it('a token minted through one replica works at once through the other', async () => {
    const r = await new GatewayClient(gateways[0], e2e.adminToken).request('POST', '/v1/tokens', { owner: uniqueTag('team'), role: 'user' });
    expect((await new GatewayClient(gateways[1], r.body.token).request('GET', '/v1/queues')).status).toBe(200);
  });
});

describe('queues', () => {
  it("allowedOwners: only the allowed owners' users may submit (403 otherwise), operators always may, null opens it again", async () => {
    const queue = uniqueTag('q');
    const [a, b] = [uniqueTag('team-a'), uniqueTag('team-b')];
    const ua = new GatewayClient(gateways[0], (await mint(a)).token);
    const ub = new GatewayClient(gateways[1], (await mint(b)).token);
    expect((await admin.request('POST', '/v1/queues', { name: queue, priority: 90, allowedOwners: [a] })).body.allowedOwners).toEqual([a]);

    expect((await ua.request('POST', '/v1/jobs', parked({ queue }))).status).toBe(201);
    const refused = await ub.request('POST', '/v1/jobs', parked({ queue }), { 'idempotency-key': randomUUID() });
    expect(refused.status).toBe(403);
    expect(refused.body.errors).toEqual([{ field: 'queue', message: 'not among the allowed owners' }]);
    expect((await admin.request('POST', '/v1/jobs', parked({ queue }))).status).toBe(201);

    expect((await admin.request('PATCH', `/v1/queues/${queue}`, { allowedOwners: [a, b] })).body.allowedOwners).toEqual([a, b]);
    expect((await ub.request('POST', '/v1/jobs', parked({ queue }))).status).toBe(201);
    expect((await admin.request('PATCH', `/v1/queues/${queue}`, { allowedOwners: [b] })).status).toBe(200);
    expect((await ua.request('POST', '/v1/jobs', parked({ queue }))).status).toBe(403);
    expect((await admin.request('PATCH', `/v1/queues/${queue}`, { allowedOwners: null })).body.allowedOwners).toBeNull();
    expect((await ua.request('POST', '/v1/jobs', parked({ queue }))).status).toBe(201);
    // A PATCH without the field leaves it as it is.
    await admin.request('PATCH', `/v1/queues/${queue}`, { allowedOwners: [a] });
    expect((await admin.request('PATCH', `/v1/queues/${queue}`, { priority: 80 })).body.allowedOwners).toEqual([a]);
    for (const bad of [['Bad Owner'], [a, a], 'x']) {
      expect((await admin.request('PATCH', `/v1/queues/${queue}`, { allowedOwners: bad })).status).toBe(400);
    }
  });

  it('deletes an empty queue (409 while it holds live jobs; never default); its finished jobs keep its name', async () => {
    const queue = uniqueTag('q');
    await admin.request('POST', '/v1/queues', { name: queue, priority: 1 });
    const job = (await admin.request('POST', '/v1/jobs', parked({ queue }))).body;
    const busy = await admin.request('DELETE', `/v1/queues/${queue}`);
    expect(busy.status).toBe(409);
    expect((await admin.request('POST', `/v1/jobs/${job.id}/cancel`)).status).toBe(202);
    expect((await admin.request('DELETE', `/v1/queues/${queue}`)).status).toBe(204);
    expect((await admin.request('GET', `/v1/queues/${queue}`)).status).toBe(404);
    expect((await admin.request('DELETE', `/v1/queues/${queue}`)).status).toBe(404);
    expect((await admin.request('GET', `/v1/jobs/${job.id}`)).body).toMatchObject({ queue, state: 'CANCELLED' });
    expect((await admin.request('POST', '/v1/jobs', parked({ queue }))).status).toBe(422);
    expect((await admin.request('DELETE', '/v1/queues/default')).status).toBe(409);
    const user = new GatewayClient(gateways[0], (await mint(uniqueTag('team'))).token);
    expect((await user.request('DELETE', '/v1/queues/default')).status).toBe(403);
  });
});

describe('nodes', () => {
  const beat = (nodeId: string, rack: string) => ({
    nodeId,
    bootId: randomUUID(),
    seq: 1,
    sentAt: Date.now(),
    zone: 'zone-x',
    rack,
    gpus: [{ index: 0, model: 'RETIRED-GPU', memoryMiB: 1024, memoryUsedMiB: 0, utilization: 0.5, healthy: true }],
    cpu: { cores: 4, utilization: 0.5 },
    memory: { totalMiB: 4096, usedMiB: 1 },
    running: [],
  });
  // Enrolled and signed, as an agent's beat is (contract 4.1).
  const send = async (b: object & { nodeId: string }) => {
    if (!hand.credentials.has(b.nodeId)) await hand.enroll(b.nodeId);
    await hand.sendBeats([hand.message(b.nodeId, b)]);
  };
  const retiredGpus = async () => (await admin.request('GET', '/v1/cluster/summary')).body.gpus.find((g: any) => g.model === 'RETIRED-GPU')?.nodes ?? 0;

  it('removes a node that holds no live attempt: it counts nowhere, and registers anew when it beats again', async () => {
    const nodeId = uniqueTag('old');
    const rack = uniqueTag('rack');
    await send(beat(nodeId, rack));
    const first = await waitFor(
      'registered',
      async () => {
        const r = await admin.request('GET', `/v1/nodes/${nodeId}`);
        return r.status === 200 && r.body.telemetry ? r.body : undefined;
      },
      { timeoutMs: 20_000 },
    );
    await waitFor('in the summary', async () => (await retiredGpus()) === 1, { timeoutMs: 5000 });
    // The database is shared with other suites (whose fleets may still register nodes), Redis is this
    // suite's own: the utilisation totals count only nodes this suite has heard (a removal forgets them
    // there): its fleet and this node. Waited for, not read once: a fleet node not yet counted (its
    // first full beat late on a loaded machine) made a before/after difference miss by one.
    const counted = async () => (await admin.request('GET', '/v1/cluster/summary')).body.utilisation.nodes;
    await waitFor('counted with the fleet', async () => (await counted()) === SIM_NODES + 1, { timeoutMs: 10_000 });
    const before = await lastAuditId();

    expect((await admin.request('DELETE', `/v1/nodes/${nodeId}`)).status).toBe(204);
    expect((await admin.request('GET', `/v1/nodes/${nodeId}`)).status).toBe(404);
    expect((await admin.request('DELETE', `/v1/nodes/${nodeId}`)).status).toBe(404);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM nodes WHERE rack = $1`, [rack]);
    expect(n).toBe(0);
    await waitFor('gone from the summary', async () => (await retiredGpus()) === 0, { timeoutMs: 5000 });
    await waitFor('counted no more', async () => (await counted()) === SIM_NODES, { timeoutMs: 10_000 });
    expect(await auditSince(before)).toEqual([expect.objectContaining({ action: 'nodes.delete', target: nodeId })]);

    // It beats again: a new node, first seen now.
    await send(beat(nodeId, rack));
    const again = await waitFor(
      'registered anew',
      async () => {
        const r = await admin.request('GET', `/v1/nodes/${nodeId}`);
        return r.status === 200 ? r.body : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(Date.parse(again.firstSeenAt)).toBeGreaterThan(Date.parse(first.firstSeenAt));
    // No agent runs it: removed again, so that no later test's job is placed on it.
    expect((await admin.request('DELETE', `/v1/nodes/${nodeId}`)).status).toBe(204);
  });

  it('refuses (409) to remove a node with a live attempt, and shows job ids on nodes to operators only', async () => {
    const job = (await admin.request('POST', '/v1/jobs', { name: 'sleeper', image: 'none', command: ['sleep', '60'] })).body;
    const running = await waitFor(
      'running',
      async () => {
        const j = (await admin.request('GET', `/v1/jobs/${job.id}`)).body;
        return j.state === 'RUNNING' ? j : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const nodeId = running.nodeIds[0];
    try {
      expect((await admin.request('DELETE', `/v1/nodes/${nodeId}`)).status).toBe(409);
      const opView = await waitFor(
        'the beat shows the attempt',
        async () => {
          const r = await admin.request('GET', `/v1/nodes/${nodeId}`);
          return r.body.telemetry?.running?.some((a: any) => a.jobId === job.id) ? r.body : undefined;
        },
        { timeoutMs: 15_000 },
      );
      expect(opView.telemetry.running).toEqual(expect.arrayContaining([{ jobId: job.id, attempt: 1 }]));
      const user = new GatewayClient(gateways[1], (await mint(uniqueTag('team'))).token);
      const asUser = [
        (await user.request('GET', `/v1/nodes/${nodeId}`)).body,
        ...(await user.request('GET', '/v1/nodes?limit=500')).body.items,
        ...(await user.request('GET', `/v1/nodes/${nodeId}/events`)).body.items,
      ];
      expect(JSON.stringify(asUser)).not.toContain(job.id);
      expect(asUser[0].telemetry).not.toHaveProperty('running');
    } finally {
      await admin.request('POST', `/v1/jobs/${job.id}/cancel`);
    }
  });
});

describe('audit log', () => {
  it("records operators' changes with who, what, when and from where, newest first, paged", async () => {
    const before = await lastAuditId();
    const t0 = Date.now();
    const owner = uniqueTag('team');
    const t = await mint(owner);
    const queue = uniqueTag('q');
    await admin.request('POST', '/v1/queues', { name: queue, priority: 5 });
    await admin.request('PATCH', `/v1/queues/${queue}`, { allowedOwners: [owner] });
    const user = new GatewayClient(gateways[1], t.token);
    const job = (await user.request('POST', '/v1/jobs', parked({ queue }))).body;
    await admin.request('POST', `/v1/jobs/${job.id}/cancel`);
    await user.request('POST', '/v1/jobs/' + (await user.request('POST', '/v1/jobs', parked({ queue }))).body.id + '/cancel');
    await admin.request('DELETE', `/v1/queues/${queue}`);
    const nodeId = `${e2e.tag}-00001`;
    await admin.request('POST', `/v1/nodes/${nodeId}/cordon`);
    await admin.request('POST', `/v1/nodes/${nodeId}/uncordon`);
    await admin.request('DELETE', `/v1/tokens/${t.id}`);

    const entries = await auditSince(before);
    expect(entries.map((e) => [e.action, e.target])).toEqual([
      ['tokens.revoke', t.id],
      ['nodes.uncordon', nodeId],
      ['nodes.cordon', nodeId],
      ['queues.delete', queue],
      // the user's cancel of their own job is not an operator's change
      ['jobs.cancel', job.id],
      ['queues.update', queue],
      ['queues.create', queue],
      ['tokens.create', t.id],
    ]);
    for (const e of entries) {
      expect(e.actor).toEqual({ owner: 'admin', role: 'operator', tokenId: null });
      expect(e.address).toMatch(/127\.0\.0\.1/);
      expect(Date.parse(e.at)).toBeGreaterThanOrEqual(t0 - 1000);
    }
    expect(entries.find((e) => e.action === 'queues.update').details).toEqual({ allowedOwners: [owner] });
    expect(entries.find((e) => e.action === 'jobs.cancel').details).toMatchObject({ owner });

    const first = await admin.request('GET', '/v1/audit?limit=3');
    const second = await admin.request('GET', `/v1/audit?limit=3&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.body.items[0].id).toBeLessThan(first.body.items[2].id);
    expect((await new GatewayClient(gateways[0], (await mint(uniqueTag('team'))).token).request('GET', '/v1/audit')).status).toBe(403);
  });
});

describe('job retention', () => {
  it('deletes finished jobs with their events once GANTRY_JOB_RETENTION_MS has passed, and keeps live ones (their expired keys go)', async () => {
    const done = (await admin.request('POST', '/v1/jobs', { name: 'quick', image: 'none', command: ['true'] })).body;
    const live = (await admin.request('POST', '/v1/jobs', parked(), { 'idempotency-key': randomUUID() })).body;
    const liveKeys = async () => (await ds.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE job_id = $1`, [live.id]))[0].n;
    expect(await liveKeys()).toBe(1);
    const finished = await waitFor(
      'finished',
      async () => {
        const j = (await admin.request('GET', `/v1/jobs/${done.id}`)).body;
        return j.state === 'SUCCEEDED' ? j : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect((await admin.request('GET', `/v1/jobs/${done.id}/events`)).body.items.length).toBeGreaterThan(1);
    const gone = await waitFor('deleted', async () => ((await admin.request('GET', `/v1/jobs/${done.id}`)).status === 404 ? Date.now() : undefined), {
      timeoutMs: 30_000,
    });
    expect(gone - Date.parse(finished.finishedAt)).toBeGreaterThanOrEqual(RETENTION_MS);
    for (const table of ['job_events', 'attempt_nodes', 'idempotency_keys']) {
      const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM ${table} WHERE job_id = $1`, [done.id]);
      expect({ table, n }).toEqual({ table, n: 0 });
    }
    expect((await admin.request('GET', `/v1/jobs/${live.id}`)).body.state).toBe('QUEUED');
    // The live job's key expired (GANTRY_IDEMPOTENCY_TTL_MS, 1 s) long before: the same sweep took it.
    expect(await liveKeys()).toBe(0);
    await admin.request('POST', `/v1/jobs/${live.id}/cancel`);
  });
});
