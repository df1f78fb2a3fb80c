import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GantryClient } from '@gantry/client';
import { TOPICS } from '@gantry/contracts';
import { Stack, waitFor } from '@gantry/stack';
import { startTestStack, testKafka, uniqueTag } from '@gantry/testing';
import { readStream } from './sse-reader-for-tests';

let stack: Stack;
let admin: GantryClient;
let adminToken: string;
let tag: string;
let root: string;
const configHome = mkdtempSync(join(tmpdir(), 'gantry-cli-config-'));

jest.setTimeout(180_000);

beforeAll(async () => {
  const e2e = await startTestStack({ suite: 'cli-and-streams', simNodes: 3, env: { GANTRY_STREAM_POLL_MS: '100' } });
  ({ stack, admin, adminToken, tag, root } = e2e);
});

afterAll(async () => {
  await stack?.stop();
});

const quick = (command: string[], extra: object = {}) => ({
  name: 'stream',
  image: 'none',
  command,
  labels: { suite: tag },
  resources: { gpus: 0, cpuCores: 1, memoryMiB: 64 },
  ...extra,
});

const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

/** Runs the CLI as a user would (node_modules/.bin/gantry is this file), with its own config dir. */
function gantry(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'apps', 'cli', 'bin', 'gantry.js'), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: configHome, XDG_CONFIG_HOME: configHome, GANTRY_URL: stack.gatewayUrl, GANTRY_TOKEN: adminToken, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

describe('the OpenAPI document', () => {
  it('served at /openapi.json is the one checked in (npm run openapi:write rewrites it)', async () => {
    const check = spawnSync(
      process.execPath,
      [join(root, 'dist', 'apps', 'api-gateway', 'src', 'openapi', 'write-openapi.js'), '--against', `${stack.gatewayUrl}/openapi.json`],
      { cwd: root, encoding: 'utf8' },
    );
    // On a difference the checker prints the diff and the script that rewrites the document.
    if (check.status !== 0) throw new Error(check.stderr || check.stdout);
    expect(check.stdout).toContain('matches docs/openapi.json');
  });
});

describe('job event streams (SSE)', () => {
  it('resumes a dropped connection with Last-Event-ID: nothing missed, nothing repeated, and the stream ends after the terminal event', async () => {
    const { job } = await admin.createJob(quick(['sh', '-c', 'sleep 1']));
    const url = `${stack.gatewayUrl}/v1/jobs/${job.id}/events?follow=true`;
    const first = await readStream(url, adminToken, { stopAfter: 2 });
    expect(first.ended).toBe(false);
    expect(first.messages.map((m) => m.id)).toEqual(['1', '2']);
    const rest = await readStream(url, adminToken, { lastEventId: first.messages[1].id });
    expect(rest.ended).toBe(true);
    const seqs = [...first.messages, ...rest.messages].map((m) => m.data.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    const last = rest.messages[rest.messages.length - 1].data;
    expect(last).toMatchObject({ jobId: job.id, type: 'STATE_CHANGED', toState: 'SUCCEEDED' });
    expect([...first.messages, ...rest.messages].map((m) => m.data.seq)).toEqual((await admin.jobEvents(job.id)).map((e) => e.seq));
  });

  it('gives a follower of a finished job every event, then ends; a follower already past the end gets nothing and ends', async () => {
    const { job } = await admin.createJob(quick(['true']));
    await waitFor('job ended', async () => TERMINAL.includes((await admin.getJob(job.id)).state), { timeoutMs: 30_000, intervalMs: 100 });
    const all = await admin.jobEvents(job.id);
    const url = `${stack.gatewayUrl}/v1/jobs/${job.id}/events?follow=true`;
    const whole = await readStream(url, adminToken);
    expect(whole.ended).toBe(true);
    expect(whole.messages.map((m) => m.data)).toEqual(all.map((e) => ({ jobId: job.id, ...e })));
    const after = await readStream(url, adminToken, { lastEventId: String(all[all.length - 1].seq) });
    expect(after).toEqual({ messages: [], ended: true, status: 200 });
  });

  it('answers problems before a stream opens: unknown job 404, bad Last-Event-ID 400, no token 401', async () => {
    expect((await readStream(`${stack.gatewayUrl}/v1/jobs/${randomUUID()}/events?follow=true`, adminToken)).status).toBe(404);
    const { job } = await admin.createJob(quick(['true']));
    expect((await readStream(`${stack.gatewayUrl}/v1/jobs/${job.id}/events?follow=true`, adminToken, { lastEventId: 'x' })).status).toBe(400);
    expect((await readStream(`${stack.gatewayUrl}/v1/events?follow=true`, adminToken, { lastEventId: '1.2.3' })).status).toBe(400);
    expect((await readStream(`${stack.gatewayUrl}/v1/events?follow=true`, 'gnt_nope')).status).toBe(401);
  });

  it("streams every visible job's events in order, resumable, filtered by queue and by owner", async () => {
    const queue = uniqueTag('q')
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '')
      .slice(0, 40);
    await admin.createQueue(queue, 5);
    const owner = uniqueTag('team')
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '')
      .slice(0, 40);
    const user = new GantryClient({ baseUrl: stack.gatewayUrl, token: (await admin.createToken(owner, 'user')).token });
    const page = await admin.eventsPage({ queue, limit: 1 });
    const start = page.nextPosition; // nothing in this queue yet: "from here"
    const jobs = [
      (await admin.createJob(quick(['true'], { queue }))).job,
      (await user.createJob(quick(['true'], { queue }))).job,
      (await admin.createJob(quick(['true'], { queue }))).job,
    ];
    for (const j of jobs)
      await waitFor(`job ${j.id} ended`, async () => TERMINAL.includes((await admin.getJob(j.id)).state), { timeoutMs: 30_000, intervalMs: 100 });
    const expected = new Map<string, number[]>();
    for (const j of jobs)
      expected.set(
        j.id,
        (await admin.jobEvents(j.id)).map((e) => e.seq),
      );
    const total = [...expected.values()].reduce((n, s) => n + s.length, 0);

    const url = `${stack.gatewayUrl}/v1/events?follow=true&queue=${queue}`;
    const first = await readStream(url, adminToken, { lastEventId: start, stopAfter: 3 });
    const rest = await readStream(url, adminToken, { lastEventId: first.messages[2].id, stopAfter: total - 3 });
    const seen = new Map<string, number[]>();
    for (const m of [...first.messages, ...rest.messages]) seen.set(m.data.jobId, [...(seen.get(m.data.jobId) ?? []), m.data.seq]);
    expect(seen).toEqual(expected);

    const mine = await readStream(`${stack.gatewayUrl}/v1/events?follow=true&queue=${queue}`, (await admin.createToken(owner, 'user')).token, {
      lastEventId: start,
      stopAfter: expected.get(jobs[1].id)!.length,
    });
    expect(new Set(mine.messages.map((m) => m.data.jobId))).toEqual(new Set([jobs[1].id]));
  });

  it('publishes each job event to gantry.job-events.v1, keyed by job id, in seq order', async () => {
    const { job } = await admin.createJob(quick(['true']));
    await waitFor('job ended', async () => TERMINAL.includes((await admin.getJob(job.id)).state), { timeoutMs: 30_000, intervalMs: 100 });
    const expected = (await admin.jobEvents(job.id)).map((e) => e.seq);
    const consumer = testKafka('cli-streams-e2e').rawConsumer({ groupId: uniqueTag('job-events-e2e') });
    const seqs: number[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: TOPICS.jobEvents, fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          if (message.key?.toString() !== job.id) return;
          const seq = JSON.parse(message.value!.toString()).seq as number;
          if (!seqs.includes(seq)) seqs.push(seq); // at-least-once: a repeat is dropped by seq
        },
      });
      await waitFor('every event on the topic', () => seqs.length >= expected.length, { timeoutMs: 60_000, intervalMs: 100 });
    } finally {
      await consumer.disconnect();
    }
    expect(seqs).toEqual(expected);
  });
});

describe('the gantry CLI, as a process', () => {
  it('logs in and saves the config for its owner only', async () => {
    const r = await gantry(['login', '--url', stack.gatewayUrl, '--token', adminToken], { GANTRY_URL: '', GANTRY_TOKEN: '' });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const file = join(configHome, 'gantry', 'config.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ url: stack.gatewayUrl, token: adminToken });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // and later commands use it
    expect((await gantry(['queues', '-o', 'json'], { GANTRY_URL: '', GANTRY_TOKEN: '' })).code).toBe(0);
  });

  it('creates a queue under a parent with a borrowing limit, and takes it out again', async () => {
    const [org, team] = [`cli-org-${uniqueTag().slice(-8)}`, `cli-team-${uniqueTag().slice(-8)}`];
    expect((await gantry(['queues', 'create', org, '--priority', '3', '--quota-gpus', '2'])).code).toBe(0);
    const created = await gantry([
      'queues',
      'create',
      team,
      '--priority',
      '3',
      '--quota-gpus',
      '4',
      '--parent',
      org,
      '--borrowing-limit-gpus',
      '2',
      '-o',
      'json',
    ]);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name: team, parent: org, quota: { gpus: 4 }, borrowingLimit: { gpus: 2 } });
    const updated = await gantry(['queues', 'update', team, '--parent', 'none', '--borrowing-limit-gpus', '0', '-o', 'json']);
    expect(JSON.parse(updated.stdout)).toMatchObject({ parent: null, borrowingLimit: { gpus: 0 } });
  });

  it('submits from YAML, lists it, follows its events to the end, and prints JSON that parses', async () => {
    // A queue of its own: the test database holds every suite's jobs, and a listing starts with the oldest.
    const queue = `cli-${uniqueTag().slice(-10)}`;
    await admin.createQueue(queue, 0);
    const file = join(configHome, 'job.yaml');
    writeFileSync(
      file,
      [
        'name: from-yaml',
        `queue: ${queue}`,
        'image: none',
        'command: [sh, -c, "sleep 1"]',
        `labels: {suite: "${tag}"}`,
        'resources: {gpus: 0, cpuCores: 1, memoryMiB: 64}',
      ].join('\n'),
    );
    const submitted = await gantry(['submit', '-f', file]);
    expect(submitted).toMatchObject({ code: 0, stderr: '' });
    const id = submitted.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const listed = await gantry(['ls', '--queue', queue, '-o', 'json']);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ id: string; name: string }>).find((j) => j.id === id)).toMatchObject({ name: 'from-yaml' });
    const table = await gantry(['ls'], { COLUMNS: '80' });
    expect(table.stdout.split('\n')[0]).toMatch(/^ID +NAME +QUEUE/);
    for (const line of table.stdout.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(80);

    const followed = await gantry(['events', '-f', id, '-o', 'json']);
    expect(followed.code).toBe(0);
    const events = followed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[events.length - 1]).toMatchObject({ type: 'STATE_CHANGED', toState: 'SUCCEEDED' });

    const got = await gantry(['get', id, '-o', 'json']);
    expect(JSON.parse(got.stdout)).toMatchObject({ id, state: 'SUCCEEDED' });
  });

  it("prints a job's log; -f follows it from a simulated node until the job ends; --tail keeps the last lines; a bad --tail is a usage error", async () => {
    const { job } = await admin.createJob(quick(['sh', '-c', 'echo cli-first; sleep 1; seq 1 5; echo cli-last']));
    const followed = await gantry(['logs', '-f', job.id]);
    expect(followed).toMatchObject({ code: 0, stderr: '' });
    expect(followed.stdout).toBe('cli-first\n1\n2\n3\n4\n5\ncli-last\n');
    expect((await admin.getJob(job.id)).state).toBe('SUCCEEDED');
    expect((await gantry(['logs', '--tail', '2', job.id])).stdout).toBe('5\ncli-last\n');
    expect((await gantry(['logs', '--attempt', '1', '--rank', '0', job.id])).stdout).toBe(followed.stdout);
    expect((await gantry(['logs', '--tail', '0', job.id])).code).toBe(2);
  });

  it('describes a job that cannot be placed with its pending reason, and cancels it', async () => {
    const submitted = await gantry([
      'submit',
      '--name',
      'nowhere',
      '--gpus',
      '8',
      '--gpu-model',
      'NO-SUCH-GPU',
      '--cpus',
      '1',
      '--memory',
      '64',
      '-l',
      `suite=${tag}`,
      '--',
      'true',
    ]);
    expect(submitted.code).toBe(0);
    const id = submitted.stdout.trim();
    await waitFor('pending reason', async () => (await admin.getJob(id)).pendingReason === 'NO_MATCHING_NODES', { timeoutMs: 30_000, intervalMs: 100 });
    const described = await gantry(['describe', id]);
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/Pending reason: +NO_MATCHING_NODES/);
    expect(described.stdout).toMatch(/Events:\nSEQ +AT +TYPE/);
    expect(JSON.parse((await gantry(['describe', id, '-o', 'json'])).stdout)).toMatchObject({
      id,
      pendingReason: 'NO_MATCHING_NODES',
      events: [{ seq: 1, type: 'CREATED' }],
    });

    const cancelled = await gantry(['cancel', id]);
    expect(cancelled).toMatchObject({ code: 0, stdout: `${id}: CANCELLED\n` });
    expect((await admin.getJob(id)).state).toBe('CANCELLED');
  });

  it('cordons and uncordons a node', async () => {
    const node = `${tag}-00001`;
    expect((await gantry(['nodes', 'cordon', node])).stdout).toBe(`${node}: cordoned\n`);
    expect(JSON.parse((await gantry(['nodes', 'describe', node, '-o', 'json'])).stdout)).toMatchObject({
      id: node,
      cordoned: true,
      events: expect.arrayContaining([expect.objectContaining({ type: 'CORDONED' })]),
    });
    expect((await gantry(['nodes', 'uncordon', node])).code).toBe(0);
    expect((await admin.getNode(node)).cordoned).toBe(false);
    // Healthy: heard by this stack (the test database holds every suite's nodes, unheard here).
    const listed = JSON.parse((await gantry(['nodes', '--health', 'HEALTHY', '-o', 'json'])).stdout) as Array<{ id: string }>;
    expect(listed.map((n) => n.id)).toContain(node);
    expect(JSON.parse((await gantry(['top', '-o', 'json'])).stdout)).toHaveProperty('jobsByState');
  });

  it('submits with a retry policy, a dependency and a max runtime; explain and describe say why it waits', async () => {
    const up = (await gantry(['submit', '--name', 'upstream', '-l', `suite=${tag}`, '--cpus', '1', '--memory', '64', '--', 'sleep', '60'])).stdout.trim();
    const submitted = await gantry([
      'submit',
      '--name',
      'downstream',
      '-l',
      `suite=${tag}`,
      '--cpus',
      '1',
      '--memory',
      '64',
      '--retries',
      '2',
      '--retry-on-exit-codes',
      '1,137',
      '--backoff',
      '5',
      '--max-backoff',
      '60',
      '--depends-on',
      `${up}:finished`,
      '--max-runtime',
      '600',
      '-o',
      'json',
      '--',
      'true',
    ]);
    expect(submitted).toMatchObject({ code: 0, stderr: '' });
    const down = JSON.parse(submitted.stdout);
    expect(down).toMatchObject({
      state: 'QUEUED',
      pendingReason: 'DEPENDENCY',
      maxRuntimeSeconds: 600,
      dependsOn: [{ jobId: up, condition: 'finished' }],
      retryPolicy: { maxRetries: 2, retryOnExitCodes: [1, 137], backoffSeconds: 5, maxBackoffSeconds: 60 },
    });

    const explained = await gantry(['explain', down.id]);
    expect(explained).toMatchObject({ code: 0, stderr: '' });
    expect(explained.stdout).toMatch(/^Pending reason: +DEPENDENCY$/m);
    expect(explained.stdout).toMatch(/^Estimated start: +unknown/m);
    expect(explained.stdout).toMatch(/^ {2}DEPENDENCY: waits for 1 job\(s\) it depends on$/m);
    const json = JSON.parse((await gantry(['explain', down.id, '-o', 'json'])).stdout);
    expect(json).toMatchObject({ pendingReason: 'DEPENDENCY', blockers: [{ reason: 'DEPENDENCY' }], wouldStartWith: [], estimatedStartAt: null });

    const described = await gantry(['describe', down.id]);
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(new RegExp(`^Depends on: +${up} \\(finished\\)$`, 'm'));
    expect(described.stdout).toMatch(/^Retry policy: +2 retries \(exit codes 1,137\), backoff 5 s up to 60 s$/m);
    expect(described.stdout).toMatch(/^Why it waits \(gantry explain\):\n {2}Pending reason: +DEPENDENCY/m);
    expect(JSON.parse((await gantry(['describe', down.id, '-o', 'json'])).stdout)).toMatchObject({
      id: down.id,
      explanation: { blockers: [{ reason: 'DEPENDENCY' }] },
    });

    // A running job does not wait: explain is the server's 409, exit 1; describe shows no explanation.
    await waitFor('upstream running', async () => (await admin.getJob(up)).state === 'RUNNING', { timeoutMs: 30_000, intervalMs: 100 });
    const running = await gantry(['explain', up]);
    expect(running.code).toBe(1);
    expect(running.stderr).toMatch(/^error: Conflict: job .* is RUNNING: only a queued job waits\n$/);
    expect((await gantry(['describe', up])).stdout).not.toContain('Why it waits');
    expect((await gantry(['cancel', down.id, up])).code).toBe(0);
  });

  it('drains a node: cordoned at once, DRAINED after the grace; an uncordon makes it placeable again', async () => {
    const node = `${tag}-00002`;
    const drained = await gantry(['nodes', 'drain', node, '--grace', '0']);
    expect(drained).toMatchObject({ code: 0, stdout: `${node}: cordoned, draining (what runs there is requeued after 0 s)\n` });
    expect((await admin.getNode(node)).cordoned).toBe(true);
    const events = await waitFor(
      'the DRAINED event',
      async () => {
        const d = JSON.parse((await gantry(['nodes', 'describe', node, '-o', 'json'])).stdout);
        return d.events.some((e: { type: string }) => e.type === 'DRAINED') ? d.events : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'CORDONED', reason: 'DRAIN' }),
        expect.objectContaining({ type: 'DRAINED', reason: 'NODE_DRAINED' }),
      ]),
    );
    expect((await gantry(['nodes', 'uncordon', node])).code).toBe(0);
    expect((await admin.getNode(node)).cordoned).toBe(false);
  });

  it.each<[string, string[], Record<string, string>, number, RegExp]>([
    [
      'an unknown job: the problem, exit 1',
      ['get', '00000000-0000-4000-8000-000000000000'],
      {},
      1,
      /^error: Not found: job 00000000-0000-4000-8000-000000000000 not found\n$/,
    ],
    ['a bad token: the problem and a hint, exit 1', ['ls'], { GANTRY_TOKEN: 'gnt_nope' }, 1, /^error: Unauthenticated: unknown token\n.*gantry login/],
    ['a field the server refuses: the field errors, exit 1', ['submit', '--nodes', '0', '--', 'true'], {}, 1, /^error: Validation failed: .*\n {2}nodes: /],
    ['an unknown command: exit 2', ['frobnicate'], {}, 2, /unknown command 'frobnicate'/],
    ['a submit without a command: exit 2', ['submit'], {}, 2, /no command/],
    ['a bad number: exit 2', ['ls', '--limit', 'many'], {}, 2, /--limit must be a whole number/],
    ['a bad output format: exit 2', ['ls', '-o', 'xml'], {}, 2, /Allowed choices are table, json/],
    [
      'a dependency with an unknown condition: exit 2',
      ['submit', '--depends-on', 'x:afterok', '--', 'true'],
      {},
      2,
      /--depends-on takes <job-id>\[:succeeded\|finished\]/,
    ],
    ['a drain grace past a day: exit 2', ['nodes', 'drain', 'n', '--grace', '90000'], {}, 2, /--grace must be at most 86400 seconds/],
    [
      'explain of an unknown job: exit 1',
      ['explain', '00000000-0000-4000-8000-000000000000'],
      {},
      1,
      /^error: Not found: job 00000000-0000-4000-8000-000000000000 not found\n$/,
    ],
    [
      'a dependency on an unknown job: the field error, exit 1',
      ['submit', '--depends-on', '00000000-0000-4000-8000-000000000000', '--', 'true'],
      {},
      1,
      /\n {2}dependsOn\[0\]\.jobId: /,
    ],
  ])('%s', async (_what, args, env, code, stderr) => {
    const r = await gantry(args, env);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(stderr);
    expect(r.stderr).not.toMatch(/\n\s+at /); // never a stack trace
  });

  it('teaches with --help and completes commands', async () => {
    const help = await gantry(['submit', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Examples:');
    expect(help.stdout).toContain('gantry submit -f train.yaml');
    expect((await gantry(['__complete', 'nodes'])).stdout.split('\n')).toEqual(expect.arrayContaining(['cordon', 'uncordon', 'drain', 'describe', 'enroll']));
    expect((await gantry(['completion', 'zsh'])).stdout).toContain('compdef _gantry gantry');
  });
});
