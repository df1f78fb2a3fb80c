import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { Stack, waitFor } from '@gantry/stack';
import { openDataSource, startTestStack } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Contract 5.4's usage report through the real services (ADR 0037): each user's finished jobs show
 * in their own report and nobody else's, exactly the CPU-time the attempts held (placement to end,
 * as their events say), before and after the reconciler folds them into the rollup; an operator
 * sees everyone; text/csv gives the same rows; bad queries are 400 problems.
 */

let stack: Stack;
let admin: GatewayClient;
let alice: GatewayClient;
let bob: GatewayClient;
let owners: { alice: string; bob: string };
let ds: DataSource;
let adminToken: string;
// Reports over a range that reaches now move while anyone's attempts run (they count up to now), and
// other suites' jobs may still run: comparisons of two reports are made as alice, whose work has ended.
let aliceToken: string;

jest.setTimeout(120_000);

const H = 3_600_000;
const hourFloor = (ms: number) => Math.floor(ms / H) * H;

beforeAll(async () => {
  const e2e = await startTestStack({ suite: 'usage', serviceEnv: { reconciler: { GANTRY_USAGE_FOLD_MS: '300' } } });
  stack = e2e.stack;
  adminToken = e2e.adminToken;
  admin = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  owners = { alice: `alice-${e2e.tag}`, bob: `bob-${e2e.tag}` };
  aliceToken = (await admin.request('POST', '/v1/tokens', { owner: owners.alice, role: 'user' })).body.token;
  alice = new GatewayClient(stack.gatewayUrl, aliceToken);
  bob = new GatewayClient(stack.gatewayUrl, (await admin.request('POST', '/v1/tokens', { owner: owners.bob, role: 'user' })).body.token);
  ds = await openDataSource();
});

afterAll(async () => {
  await ds?.destroy();
  await stack?.stop();
});

/** Runs a short job to its end; returns the CPU-ms its attempt held, from its events (placement to end). */
async function runJob(as: GatewayClient, cpuCores: number): Promise<{ id: string; cpuMs: number }> {
  const created = await as.request('POST', '/v1/jobs', {
    name: 'usage',
    image: 'none',
    command: ['sh', '-c', 'sleep 0.3'],
    resources: { gpus: 0, cpuCores, memoryMiB: 64 },
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  await waitFor(`job ${id} to end`, async () => ((await as.request('GET', `/v1/jobs/${id}`)).body.state === 'SUCCEEDED' ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  const events = (await as.request('GET', `/v1/jobs/${id}/events`)).body.items as Array<{ type: string; toState?: string; at: string }>;
  const at = (state: string) => Date.parse(events.find((e) => e.type === 'STATE_CHANGED' && e.toState === state)!.at);
  return { id, cpuMs: cpuCores * (at('SUCCEEDED') - at('SCHEDULED')) };
}

/** RFC 4180 as the report writes it: quoted fields may hold commas, quotes (doubled) and line breaks; CRLF ends each record. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (text[i] === '"' && text[i + 1] === '"') {
          field += '"';
          i += 2;
        } else if (text[i] === '"') {
          i++;
          break;
        } else field += text[i++];
      }
    } else if (text[i] === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (text.startsWith('\r\n', i)) {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else field += text[i++];
  }
  expect(field).toBe(''); // the last record ended with CRLF
  expect(record).toEqual([]);
  return records;
}

describe('GET /v1/usage', () => {
  it("each user sees exactly their own attempts' time, before and after the fold; an operator sees everyone", async () => {
    const [a1, a2, b1] = [await runJob(alice, 1), await runJob(alice, 2), await runJob(bob, 3)];
    const from = new Date(hourFloor(Date.now()) - 2 * H).toISOString();
    const to = new Date(hourFloor(Date.now()) + 2 * H).toISOString();
    const query = `/v1/usage?from=${from}&to=${to}&groupBy=owner,gpuModel&granularity=day`;
    const sum = (rows: any[], key: string) => rows.reduce((s, r) => s + Math.round(r[key] * 1000), 0);

    const check = async () => {
      const mine = (await alice.request('GET', query)).body.items as any[];
      expect(new Set(mine.map((r) => r.owner))).toEqual(new Set([owners.alice]));
      expect(mine.every((r) => r.gpuModel === null && r.gpuSeconds === 0)).toBe(true);
      expect([sum(mine, 'cpuSeconds'), mine.reduce((s, r) => s + r.attempts, 0), mine.reduce((s, r) => s + r.jobs, 0)]).toEqual([a1.cpuMs + a2.cpuMs, 2, 2]);
      const theirs = (await bob.request('GET', query)).body.items as any[];
      expect(theirs.map((r) => [r.owner, Math.round(r.cpuSeconds * 1000)])).toEqual(expect.arrayContaining([[owners.bob, b1.cpuMs]]));
      expect(theirs.every((r) => r.owner === owners.bob)).toBe(true);
      const all = (await admin.request('GET', query)).body.items as any[];
      expect(
        sum(
          all.filter((r) => r.owner === owners.alice),
          'cpuSeconds',
        ),
      ).toBe(a1.cpuMs + a2.cpuMs);
      expect(
        sum(
          all.filter((r) => r.owner === owners.bob),
          'cpuSeconds',
        ),
      ).toBe(b1.cpuMs);
      return mine;
    };
    const before = await check();
    // The reconciler's leader folds the records into the hourly rollup; the report does not move.
    await waitFor(
      'the records folded',
      async () => {
        const [row] = await ds.query(`SELECT count(*)::int AS n FROM usage_records WHERE job_id = ANY($1::uuid[]) AND folded`, [[a1.id, a2.id, b1.id]]);
        return row.n === 3 ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(await check()).toEqual(before);
  });

  it('text/csv gives the same rows as RFC 4180 CSV with a header', async () => {
    const from = new Date(hourFloor(Date.now()) - 2 * H).toISOString();
    const to = new Date(hourFloor(Date.now()) + H).toISOString();
    const query = `/v1/usage?from=${from}&to=${to}&groupBy=queue,owner&granularity=hour`;
    const json = (await alice.request('GET', query)).body.items as any[];
    expect(json.length).toBeGreaterThan(0);
    const res = await alice.request('GET', query, undefined, { accept: 'text/csv' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...rows] = parseCsv(res.body as string);
    expect(header).toEqual(['start', 'owner', 'queue', 'gpuSeconds', 'cpuSeconds', 'attempts', 'jobs']);
    expect(rows).toEqual(json.map((r) => [r.start, r.owner, r.queue, String(r.gpuSeconds), String(r.cpuSeconds), String(r.attempts), String(r.jobs)]));
  });

  it('gantry usage prints the same rows: csv as the gateway writes it, json, and a table in GPU-hours', () => {
    const from = new Date(hourFloor(Date.now()) - 2 * H).toISOString();
    const home = mkdtempSync(join(tmpdir(), 'gantry-usage-cli-'));
    const gantryAs = (token: string, ...args: string[]) =>
      spawnSync(process.execPath, [join(__dirname, '..', '..', 'apps', 'cli', 'bin', 'gantry.js'), 'usage', '--from', from, ...args], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: home, GANTRY_URL: stack.gatewayUrl, GANTRY_TOKEN: token },
      });
    const gantry = (...args: string[]) => gantryAs(adminToken, ...args);
    return (async () => {
      // --to defaults to the next whole hour: the same range as this one.
      const to = new Date(hourFloor(Date.now()) + H).toISOString();
      const api = await alice.request('GET', `/v1/usage?from=${from}&to=${to}&groupBy=owner,queue&granularity=hour`, undefined, { accept: 'text/csv' });
      const csv = gantryAs(aliceToken, '--by', 'owner,queue', '--granularity', 'hour', '-o', 'csv');
      expect(csv.status).toBe(0);
      expect(csv.stdout).toBe(api.body);
      const json = gantry('--by', 'owner', '-o', 'json');
      expect(json.status).toBe(0);
      expect(JSON.parse(json.stdout).items.map((r: any) => r.owner)).toEqual(expect.arrayContaining([owners.alice, owners.bob]));
      const table = gantry('--by', 'owner');
      expect(table.stdout).toMatch(/START\s+OWNER\s+GPU-HOURS/);
      const bad = gantry('--granularity', 'week');
      expect(bad.status).toBe(2);
      expect(bad.stderr).toMatch(/hour, day, month/);
      const refused = gantry('--to', '2020-01-01');
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(/from must be before to/);
    })();
  });

  it.each([
    ['no from', 'to=2026-01-02', /"field":"from"/],
    ['a bad date', 'from=yesterday&to=2026-01-02', /from must be an ISO 8601/],
    ['from not before to', 'from=2026-01-02&to=2026-01-01', /from must be before to/],
    ['not a whole hour', 'from=2026-01-01T00:30:00Z&to=2026-01-02', /whole UTC hour/],
    ['an unknown groupBy', 'from=2026-01-01&to=2026-01-02&groupBy=team', /groupBy takes owner, queue, gpuModel/],
    ['an unknown granularity', 'from=2026-01-01&to=2026-01-02&granularity=week', /granularity must be one of/],
    ['too many buckets', 'from=2000-01-01&to=2026-01-01&granularity=hour', /more than 8784 hour buckets/],
    ['an unknown parameter', 'from=2026-01-01&to=2026-01-02&owner=x', /owner/],
  ])('%s is a 400 problem', async (_name, qs, detail) => {
    const res = await alice.request('GET', `/v1/usage?${qs}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(JSON.stringify(res.body)).toMatch(detail);
  });

  it('needs a token', async () => {
    expect((await new GatewayClient(stack.gatewayUrl, null).request('GET', '/v1/usage?from=2026-01-01&to=2026-01-02')).status).toBe(401);
  });
});
