import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GantryClient, Job } from '@gantry/client';
import { ServiceProcess, Stack, waitFor } from '@gantry/stack';
import { TestStack, startTestStack, uniqueTag } from '@gantry/testing';
import { Browser } from 'playwright-core';
import { ConsoleTab, DESKTOP, NARROW, launchChromium, openTab, overflowingElements, screenshotDir, seriousA11yViolations, signIn } from './console-browser';

/**
 * The operator console (contract §4.6, issue 16) in Debian's Chromium against the real stack: every
 * check drives the pages as a person would (form fields by label, buttons by name), on a page that
 * must log no console error, page error or CSP violation, and pass axe-core with no serious
 * violation. The last test adds a 5,000-node simulated fleet and times the overview.
 */
let stack: Stack;
let admin: GantryClient;
let adminToken: string;
let tag: string;
let root: string;
let browser: Browser;
let shots: string;
let fleet: ServiceProcess | null = null;
let e2e: TestStack;
const tabs: ConsoleTab[] = [];
const FLEET_NODES = 5_000;

jest.setTimeout(240_000);

beforeAll(async () => {
  e2e = await startTestStack({ suite: 'console', simNodes: 3, env: { GANTRY_STREAM_POLL_MS: '100' } });
  ({ stack, admin, adminToken, tag, root } = e2e);
  browser = await launchChromium();
  shots = screenshotDir(root);
});

afterAll(async () => {
  await browser?.close();
  await fleet?.stop();
  await stack?.stop();
});

/** A tab that must end its test with no console error (apart from `expected`, e.g. a 404 the test caused). */
async function tab(viewport = DESKTOP): Promise<ConsoleTab> {
  const t = await openTab(browser, viewport);
  tabs.push(t);
  return t;
}

afterEach(async () => {
  const open = tabs.splice(0);
  for (const t of open) await t.close();
  for (const t of open) expect(t.errors).toEqual([]);
});

function nav(t: ConsoleTab, section: string) {
  return t.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: section, exact: true });
}

async function expectAccessible(t: ConsoleTab, name: string): Promise<void> {
  expect({ page: name, violations: await seriousA11yViolations(t.page) }).toEqual({ page: name, violations: [] });
}

async function shot(t: ConsoleTab, name: string): Promise<void> {
  await t.page.screenshot({ path: join(shots, `${name}.png`) });
}

/** A user token of a fresh owner, and a client acting as that user. */
async function newUser(): Promise<{ owner: string; token: string; client: GantryClient }> {
  const owner = uniqueTag('team')
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '')
    .slice(0, 40);
  const { token } = await admin.createToken(owner, 'user');
  return { owner, token, client: new GantryClient({ baseUrl: stack.gatewayUrl, token }) };
}

const quick = (name: string, command: string[]) => ({
  name,
  image: 'none',
  command,
  labels: { suite: tag },
  resources: { gpus: 0, cpuCores: 1, memoryMiB: 64 },
});

/** Remembered across tests: the job the jobs table watched, opened again on its own page. */
let watched: { job: Job; token: string };

describe('sign-in', () => {
  it('refuses an unknown token with a clear message and signs in with a good one, showing who is signed in', async () => {
    const t = await tab();
    await t.page.goto(`${stack.gatewayUrl}/ui/`);
    await expectAccessible(t, 'sign-in');
    await shot(t, 'sign-in');
    await t.page.getByLabel('Token').fill('gnt_not-a-token');
    await t.page.getByRole('button', { name: 'Sign in' }).click();
    await t.page.getByRole('alert').filter({ hasText: 'does not know this token' }).waitFor();
    // Chromium logs the refused request (401) itself: that one is expected.
    t.errors.splice(0, t.errors.length, ...t.errors.filter((e) => !/status of 401/.test(e)));
    await t.page.getByLabel('Token').fill(adminToken);
    await t.page.getByRole('button', { name: 'Sign in' }).click();
    await t.page.getByRole('navigation', { name: 'Sections' }).waitFor();
    await t.page.locator('.who').filter({ hasText: 'admin' }).filter({ hasText: 'operator' }).waitFor();
    // The token lives in this tab's sessionStorage: a reload keeps the session.
    await t.page.reload();
    await t.page.getByRole('navigation', { name: 'Sections' }).waitFor();
  });
});

describe('jobs', () => {
  it('shows a job submitted through the API and moves it to SUCCEEDED in the table without reloading', async () => {
    const user = await newUser();
    const t = await tab();
    await signIn(t, stack.gatewayUrl, user.token);
    await t.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Jobs', exact: true }).click();
    await t.page.getByRole('status').filter({ hasText: 'Live: rows change' }).waitFor();
    // A marker on the window: gone if the page were reloaded.
    await t.page.evaluate(() => ((globalThis as Record<string, unknown>).gantryNoReload = true));
    const { job } = await user.client.createJob(quick('console-hello', ['sh', '-c', 'echo hello-console; sleep 1']));
    const row = t.page.locator(`tr[data-job-id="${job.id}"]`);
    await row.waitFor();
    await row.locator('.state').filter({ hasText: 'SUCCEEDED' }).waitFor({ timeout: 60_000 });
    expect(await t.page.evaluate(() => (globalThis as Record<string, unknown>).gantryNoReload)).toBe(true);
    expect((await user.client.getJob(job.id)).state).toBe('SUCCEEDED');
    watched = { job, token: user.token };
    await expectAccessible(t, 'jobs');
    await shot(t, 'jobs');
  });

  it("opens the job's page with its placement, events timeline and logs", async () => {
    const t = await tab();
    await signIn(t, stack.gatewayUrl, watched.token);
    await t.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Jobs', exact: true }).click();
    await t.page.getByRole('link', { name: 'console-hello' }).click();
    await t.page.getByRole('heading', { level: 1, name: /console-hello/ }).waitFor();
    const timeline = t.page.locator('ol.timeline li');
    await timeline.filter({ hasText: 'RUNNING → SUCCEEDED' }).waitFor();
    const types = await timeline.locator('strong').allTextContents();
    expect(types[0]).toBe('CREATED');
    expect(types.filter((x) => x === 'STATE_CHANGED')).toHaveLength(3);
    const final = await admin.getJob(watched.job.id);
    await t.page.locator('section[aria-labelledby="placements-heading"]').getByRole('link', { name: final.nodeIds[0], exact: true }).waitFor();
    await t.page.getByText('its history is complete').waitFor();
    // Its logs (contract §4.4): the finished job's whole output, read from its node's agent.
    await t.page.locator('pre.logs').filter({ hasText: 'hello-console' }).waitFor({ timeout: 30_000 });
    await t.page.locator('.logs-note').filter({ hasText: 'The log is complete' }).waitFor({ timeout: 30_000 });
    await expectAccessible(t, 'job');
    await shot(t, 'job');
  });

  it("follows a running job's log on its page as lines are written, and says when it is complete", async () => {
    const user = await newUser();
    const release = join(e2e.work, uniqueTag('release'));
    const { job } = await user.client.createJob(
      quick('console-chatter', ['sh', '-c', `echo first-words; while [ ! -e '${release}' ]; do sleep 0.1; done; echo last-words`]),
    );
    const t = await tab();
    await signIn(t, stack.gatewayUrl, user.token);
    await t.page.goto(`${stack.gatewayUrl}/ui/jobs/${job.id}`);
    const logs = t.page.locator('pre.logs');
    await logs.filter({ hasText: 'first-words' }).waitFor({ timeout: 60_000 });
    await t.page.locator('.logs-note').filter({ hasText: 'Following the log' }).waitFor();
    expect(await logs.textContent()).not.toContain('last-words');
    writeFileSync(release, '');
    await logs.filter({ hasText: 'last-words' }).waitFor({ timeout: 30_000 });
    await t.page.locator('.logs-note').filter({ hasText: 'The log is complete' }).waitFor({ timeout: 30_000 });
    expect((await logs.textContent())?.trim()).toBe('first-words\nlast-words');
    // The page asks a QUEUED job for its explanation; placed between that read and the ask, the job
    // answers 409 (nothing to explain; the page shows none) and Chromium logs the refused request.
    t.errors.splice(0, t.errors.length, ...t.errors.filter((e) => !/status of 409 .*\/explain\)$/.test(e)));
  });

  it('cancels a running job from its page', async () => {
    const user = await newUser();
    const { job } = await user.client.createJob(quick('console-nap', ['sleep', '120']));
    await waitFor('job running', async () => (await user.client.getJob(job.id)).state === 'RUNNING', { timeoutMs: 60_000, intervalMs: 100 });
    const t = await tab();
    await signIn(t, stack.gatewayUrl, user.token);
    await t.page.goto(`${stack.gatewayUrl}/ui/jobs/${job.id}`);
    await t.page.locator('.job-state').filter({ hasText: 'RUNNING' }).waitFor();
    await t.page.getByRole('button', { name: 'Cancel job' }).click();
    await t.page.locator('.job-state').filter({ hasText: 'CANCELLED' }).waitFor({ timeout: 60_000 });
    // By type: the STATE_CHANGED to CANCELLED names the same word as its reason.
    await t.page.locator('ol.timeline li[data-type="CANCEL_REQUESTED"]').waitFor();
    expect(await user.client.getJob(job.id)).toMatchObject({ state: 'CANCELLED', cancelRequested: true });
    expect(await t.page.getByRole('button', { name: 'Cancel job' }).count()).toBe(0);
  });

  it("never shows a user another owner's job: not in the table, not live, not by its URL", async () => {
    const alice = await newUser();
    const bob = await newUser();
    const { job: own } = await bob.client.createJob(quick('bob-job', ['true']));
    const t = await tab();
    await signIn(t, stack.gatewayUrl, bob.token);
    await t.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Jobs', exact: true }).click();
    await t.page.getByRole('status').filter({ hasText: 'Live: rows change' }).waitFor();
    await t.page.locator(`tr[data-job-id="${own.id}"]`).waitFor();
    const { job: hers } = await alice.client.createJob(quick('alice-job', ['true']));
    // Her job runs to its end while Bob watches; his own next job shows up, hers never does.
    await waitFor('her job ended', async () => ['SUCCEEDED', 'FAILED'].includes((await alice.client.getJob(hers.id)).state), {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    const { job: later } = await bob.client.createJob(quick('bob-later', ['true']));
    await t.page.locator(`tr[data-job-id="${later.id}"]`).waitFor();
    expect(await t.page.locator(`tr[data-job-id="${hers.id}"]`).count()).toBe(0);
    expect(
      await t.page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { jobId: string } }).dataset.jobId)),
    ).not.toContain(hers.id);
    await t.page.goto(`${stack.gatewayUrl}/ui/jobs/${hers.id}`);
    await t.page.getByRole('alert').filter({ hasText: 'not found' }).waitFor();
    expect(await t.page.getByText('alice-job').count()).toBe(0);
    t.errors.splice(0, t.errors.length, ...t.errors.filter((e) => !/status of 404/.test(e)));
  });
});

describe('why a job waits', () => {
  /** A job that asks for 2 GPUs in a queue of its own with a quota of 1: queued for good, with a pending reason. */
  async function jobOverQuota(name: string) {
    const queue = `explain-${uniqueTag()
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')
      .slice(-10)}`;
    await admin.createQueue(queue, 0, 1);
    const { job } = await admin.createJob({
      name,
      queue,
      image: 'none',
      command: ['true'],
      labels: { suite: tag },
      resources: { gpus: 2, cpuCores: 1, memoryMiB: 64 },
      maxRuntimeSeconds: 600,
    });
    // The page shows why it waits once the scheduler has given it a pending reason (no job event marks that).
    await waitFor('a pending reason', async () => (await admin.getJob(job.id)).pendingReason !== null, { timeoutMs: 30_000, intervalMs: 100 });
    return job;
  }

  it("shows a queued job's explain: each blocker with what it lacks, what would let it start, its position and estimate", async () => {
    const job = await jobOverQuota('console-explain');
    const t = await tab();
    await signIn(t, stack.gatewayUrl, adminToken);
    await t.page.goto(`${stack.gatewayUrl}/ui/jobs/${job.id}`);
    await t.page.getByRole('heading', { level: 1, name: /console-explain/ }).waitFor();
    const quota = t.page.locator('.blockers li[data-reason="QUOTA_EXCEEDED"]');
    await quota.waitFor({ timeout: 30_000 });
    expect(await quota.textContent()).toMatch(/needs 2.*\(lacks 1 GPU\)/);
    await t.page.getByRole('heading', { name: 'It would start now with' }).waitFor();
    await t.page.locator('.would-start li').filter({ hasText: 'ANOTHER_QUEUE' }).first().waitFor();
    await t.page
      .locator('.explanation')
      .filter({ hasText: /Position: 1 in its queue, \d+ overall\./ })
      .waitFor();
    await t.page.locator('.explanation').filter({ hasText: 'Estimated start:' }).waitFor();
    await expectAccessible(t, 'job (explain)');
    await shot(t, 'job-explain');
    await admin.cancelJob(job.id);
  });

  it('explains a queued job also when the capabilities arrive after the job was read', async () => {
    const job = await jobOverQuota('console-explain-late');
    const t = await tab();
    await signIn(t, stack.gatewayUrl, adminToken);
    // The OpenAPI document (the console's capabilities) is held until the page has read the job.
    const jobRead = t.page.waitForResponse((r) => r.url().endsWith(`/v1/jobs/${job.id}`) && r.request().method() === 'GET');
    await t.page.route('**/openapi.json', async (route) => {
      await jobRead;
      await route.continue();
    });
    await t.page.goto(`${stack.gatewayUrl}/ui/jobs/${job.id}`);
    await jobRead;
    await t.page.locator('.blockers li[data-reason="QUOTA_EXCEEDED"]').waitFor({ timeout: 30_000 });
    await admin.cancelJob(job.id);
  });
});

describe('nodes and queues', () => {
  it('lets an operator cordon a node and shows it marked, in its page and in the list; a user gets no such button', async () => {
    const nodeId = `${tag}-00001`;
    const t = await tab();
    await signIn(t, stack.gatewayUrl, adminToken);
    await nav(t, 'Nodes').click();
    // Only this stack's nodes are heard in its Redis db: other suites' nodes in the shared database are UNHEALTHY here.
    await t.page.getByLabel('Health').selectOption('HEALTHY');
    await t.page.getByRole('button', { name: 'Apply' }).click();
    await t.page.locator(`tr[data-node-id="${nodeId}"]`).waitFor();
    await expectAccessible(t, 'nodes');
    await shot(t, 'nodes');
    await t.page.getByRole('link', { name: nodeId, exact: true }).click();
    await t.page.getByRole('heading', { level: 1, name: new RegExp(nodeId) }).waitFor();
    await t.page.getByRole('button', { name: 'Cordon', exact: true }).click();
    await t.page.locator('.node-status').filter({ hasText: 'CORDONED' }).waitFor();
    await t.page.getByRole('button', { name: 'Uncordon', exact: true }).waitFor();
    expect((await admin.getNode(nodeId)).cordoned).toBe(true);
    await t.page.locator('ol.timeline li').filter({ hasText: 'CORDONED' }).waitFor();
    await expectAccessible(t, 'node');
    await shot(t, 'node');
    await t.page.goBack();
    await t.page.locator(`tr[data-node-id="${nodeId}"]`).filter({ hasText: 'CORDONED' }).waitFor();

    const user = await newUser();
    const u = await tab();
    await signIn(u, stack.gatewayUrl, user.token);
    await u.page.goto(`${stack.gatewayUrl}/ui/nodes/${nodeId}`);
    await u.page.locator('.node-status').filter({ hasText: 'CORDONED' }).waitFor();
    expect(await u.page.getByRole('button', { name: /cordon/i }).count()).toBe(0);

    await t.page.getByRole('link', { name: nodeId, exact: true }).click();
    await t.page.getByRole('button', { name: 'Uncordon', exact: true }).click();
    await t.page.getByRole('button', { name: 'Cordon', exact: true }).waitFor();
    expect((await admin.getNode(nodeId)).cordoned).toBe(false);
  });

  it('lets an operator drain a node: DRAINING with its deadline, then DRAINED with its event; an uncordon puts it back to work', async () => {
    const nodeId = `${tag}-00002`;
    const t = await tab();
    await signIn(t, stack.gatewayUrl, adminToken);
    await t.page.goto(`${stack.gatewayUrl}/ui/nodes/${nodeId}`);
    await t.page.getByRole('heading', { level: 1, name: new RegExp(nodeId) }).waitFor();
    await t.page.getByLabel('Grace (s)').fill('3');
    await t.page.getByRole('button', { name: 'Drain', exact: true }).click();
    // At once: cordoned, draining until the deadline the gateway set, and no second Drain offered.
    await t.page.locator('.node-status').filter({ hasText: 'DRAINING' }).waitFor();
    const node = await admin.getNode(nodeId);
    expect(node).toMatchObject({ cordoned: true, drainDeadline: expect.any(String) });
    await t.page.locator('.drain-status').filter({ hasText: 'pending' }).locator(`time[datetime="${node.drainDeadline}"]`).waitFor();
    expect(await t.page.getByRole('button', { name: 'Drain', exact: true }).count()).toBe(0);
    await t.page.locator('ol.timeline li').filter({ hasText: 'CORDONED' }).filter({ hasText: 'DRAIN' }).waitFor();
    await expectAccessible(t, 'node (draining)');
    // After the grace the reconciler's leader ends the drain (every GANTRY_DETECTOR_INTERVAL_MS); the page refreshes every 5 s.
    await t.page.locator('ol.timeline li[data-type="DRAINED"]').filter({ hasText: 'NODE_DRAINED' }).waitFor({ timeout: 30_000 });
    await t.page.locator('.node-status').filter({ hasText: 'DRAINED' }).waitFor();
    await t.page.locator('.drain-status').filter({ hasText: 'nothing was running; the node stays cordoned' }).waitFor();
    expect((await admin.getNode(nodeId)).drainDeadline).toBeNull();
    await expectAccessible(t, 'node (drained)');
    await shot(t, 'node-drained');
    await t.page.getByRole('button', { name: 'Uncordon', exact: true }).click();
    await t.page.getByRole('button', { name: 'Cordon', exact: true }).waitFor();
    expect(await t.page.locator('.node-status').filter({ hasText: 'DRAINED' }).count()).toBe(0);
    expect((await admin.getNode(nodeId)).cordoned).toBe(false);
  });

  it('lets an operator create a queue and edit its priority, weight and quota', async () => {
    const name = `q-${uniqueTag()
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')
      .slice(-12)}`;
    const t = await tab();
    await signIn(t, stack.gatewayUrl, adminToken);
    await t.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Queues', exact: true }).click();
    const form = t.page.locator('form').filter({ has: t.page.getByRole('button', { name: 'Create queue' }) });
    await form.getByLabel('Name').fill(name);
    await form.getByLabel('Priority').fill('7');
    await form.getByLabel('GPU quota').fill('16');
    await form.getByRole('button', { name: 'Create queue' }).click();
    const row = t.page.locator(`tr[data-queue="${name}"]`);
    await row.waitFor();
    await row.getByRole('button', { name: `Edit queue ${name}` }).click();
    await row.getByLabel(`Priority of ${name}`).fill('9');
    await row.getByLabel(`Weight of ${name}`).fill('2');
    await row.getByLabel(`GPU quota of ${name} (empty: none)`).fill('');
    await row.getByRole('button', { name: 'Save' }).click();
    await t.page
      .getByRole('status')
      .filter({ hasText: `Queue ${name} saved.` })
      .waitFor();
    expect(await admin.getQueue(name)).toMatchObject({ name, priority: 9, weight: 2, quota: { gpus: null } });
    await row.filter({ hasText: 'none' }).waitFor();
    await expectAccessible(t, 'queues');
    await shot(t, 'queues');
  });
});

describe('usage', () => {
  it("shows GPU-hours by owner over time: a user their own only, an operator everyone's", async () => {
    const [user, other] = [await newUser(), await newUser()];
    for (const u of [user, other]) {
      const { job } = await u.client.createJob(quick('console-usage', ['sh', '-c', 'sleep 0.2']));
      await waitFor(`job ${job.id} to end`, async () => ((await u.client.getJob(job.id)).state === 'SUCCEEDED' ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
    }
    const t = await tab();
    await signIn(t, stack.gatewayUrl, user.token);
    await nav(t, 'Usage').click();
    await t.page.locator(`tr[data-owner="${user.owner}"]`).waitFor();
    await t.page.getByRole('img', { name: /GPU-hours by owner per day/ }).waitFor();
    expect(await t.page.locator('tr[data-owner]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-owner')))).toEqual([user.owner]);
    await expectAccessible(t, 'usage');
    await shot(t, 'usage');
    // Per hour, as an operator: both owners.
    const op = await tab();
    await signIn(op, stack.gatewayUrl, adminToken);
    await nav(op, 'Usage').click();
    await op.page.getByRole('combobox', { name: 'Per' }).selectOption('hour');
    await op.page.getByRole('button', { name: 'Show' }).click();
    await op.page.getByRole('img', { name: /GPU-hours by owner per hour/ }).waitFor();
    for (const u of [user, other]) await op.page.locator(`tr[data-owner="${u.owner}"]`).waitFor();
  });
});

describe(`the overview of a ${FLEET_NODES.toLocaleString('en-US')}-node fleet`, () => {
  beforeAll(async () => {
    const prefix = `${tag}-fleet`;
    fleet = e2e.extraAgent('fleet-agent', { nodes: FLEET_NODES, prefix, executor: 'sleep' }, { GANTRY_HEARTBEAT_MS: '5000' });
    fleet.start();
    await fleet.ready(120_000);
    await waitFor(
      `${FLEET_NODES} fleet nodes heard`,
      async () => {
        const h = await admin.clusterHeatmap();
        let heard = 0;
        for (let i = 0; i < h.nodeIds.length; i++) if (h.health[i] === 'H' && h.nodeIds[i].startsWith(prefix)) heard++;
        return heard >= FLEET_NODES;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
  });

  it('draws the heatmap of every node (the time is logged), passes axe, and fits a narrow screen', async () => {
    const t = await tab();
    await signIn(t, stack.gatewayUrl, adminToken);
    // Each load: a full navigation (HTML, script, sign-in from sessionStorage, the heatmap read and drawn).
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      await t.page.goto(`${stack.gatewayUrl}/ui/`);
      const canvas = t.page.locator('canvas[data-drawn]');
      await canvas.waitFor();
      expect(Number(await canvas.getAttribute('data-drawn'))).toBeGreaterThanOrEqual(FLEET_NODES);
      times.push(await t.page.evaluate(() => performance.getEntriesByName('gantry:heatmap-drawn')[0].startTime));
    }
    const median = [...times].sort((a, b) => a - b)[1];
    // Timed, not asserted: a test's timing on a shared machine says more about the machine than the
    // console (the figures and their conditions are in docs/benchmarks/history/console.md).
    console.log(
      `overview of ${FLEET_NODES} nodes: navigation to heatmap drawn ${times.map((x) => Math.round(x)).join(', ')} ms (median ${Math.round(median)})`,
    );
    await t.page
      .getByText('Loading…')
      .first()
      .waitFor({ state: 'detached' })
      .catch(() => undefined);
    await t.page.locator('#gpus-heading').waitFor();
    await expectAccessible(t, 'overview');
    await shot(t, 'overview');
    await t.page.getByLabel('GPU utilisation').check();
    await shot(t, 'overview-gpu-utilisation');

    // 50,000 nodes (racks of 20, three zones): the browser's part (parse and draw) of the same
    // page load, with the answer the route would give for such a fleet served by the test.
    const big = syntheticHeatmap(50_000);
    const b = await tab();
    await signIn(b, stack.gatewayUrl, adminToken);
    await b.page.route('**/v1/cluster/heatmap', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: big }));
    const bigTimes: number[] = [];
    for (let i = 0; i < 3; i++) {
      await b.page.goto(`${stack.gatewayUrl}/ui/`);
      await b.page.locator('canvas[data-drawn="50000"]').waitFor();
      bigTimes.push(await b.page.evaluate(() => performance.getEntriesByName('gantry:heatmap-drawn')[0].startTime));
    }
    const bigMedian = [...bigTimes].sort((x, y) => x - y)[1];
    console.log(
      `overview of 50,000 nodes (answer ${(big.length / 1e6).toFixed(2)} MB, served by the test): navigation to heatmap drawn ${bigTimes.map((x) => Math.round(x)).join(', ')} ms (median ${Math.round(bigMedian)})`,
    );

    const n = await tab(NARROW);
    await signIn(n, stack.gatewayUrl, adminToken);
    await n.page.locator('canvas[data-drawn]').waitFor();
    expect(await overflowingElements(n.page)).toEqual([]);
    await expectAccessible(n, 'overview (narrow)');
    await shot(n, 'overview-narrow');
    await n.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Jobs', exact: true }).click();
    await n.page.getByRole('status').filter({ hasText: 'Live: rows change' }).waitFor();
    expect(await overflowingElements(n.page)).toEqual([]);
    await shot(n, 'jobs-narrow');
  });
});

/** What GET /v1/cluster/heatmap answers for `n` nodes in racks of 20 over three zones (a deterministic mix). */
function syntheticHeatmap(n: number): string {
  const racks: Array<{ zone: string; rack: string; nodes: number }> = [];
  for (let i = 0; i < n / 20; i++) racks.push({ zone: `zone-${'abc'[Math.floor((i * 3) / (n / 20))]}`, rack: `r${String(i).padStart(4, '0')}`, nodes: 20 });
  const nodeIds = Array.from({ length: n }, (_, i) => `sim-${String(i).padStart(5, '0')}`);
  const health = Array.from({ length: n }, (_, i) => (i % 997 === 0 ? 'U' : i % 211 === 0 ? 'D' : 'H')).join('');
  const gpusTotal = nodeIds.map((_, i) => [8, 8, 4, 0][i % 4]);
  return JSON.stringify({
    at: new Date().toISOString(),
    racks,
    nodeIds,
    health,
    cordoned: nodeIds.flatMap((_, i) => (i % 503 === 0 ? [i] : [])),
    gpusTotal,
    gpusAllocated: gpusTotal.map((g, i) => (i % 3 === 0 ? g : 0)),
    gpuUtil: gpusTotal.map((g, i) => (g ? (i * 37) % 101 : -1)),
    cpuUtil: nodeIds.map((_, i) => (i * 13) % 101),
  });
}
