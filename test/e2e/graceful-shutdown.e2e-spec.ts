import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { openDataSource } from '@gantry/testing';
import { E2EStack, startE2EStack } from './stack-fixture';

let e2e: E2EStack;
let ds: DataSource;
beforeAll(async () => {
  e2e = await startE2EStack({ suite: 'graceful-shutdown', agentEnv: { GANTRY_SIM_EXECUTOR: 'sleep' } });
  ds = await openDataSource();
}, 120_000);
afterAll(async () => {
  await e2e?.stack.stop();
  await ds?.destroy();
});

const spec = (tag: string) => ({ name: `drain-${tag}`, image: 'none', command: ['sleep'], env: { SIM_DURATION_MS: '200' } });

/** Creates over keep-alive connections, each with its own key, until stopped; records how each ended. */
function createLoad(gatewayUrl: string, token: string, workers: number) {
  const outcomes = new Map<string, number | 'error'>();
  let running = true;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      const key = randomUUID();
      try {
        const res = await fetch(`${gatewayUrl}/v1/jobs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify(spec(e2e.tag)),
        });
        await res.arrayBuffer();
        outcomes.set(key, res.status);
      } catch {
        outcomes.set(key, 'error'); // connection refused or closed: the client's to retry with the same key
        await new Promise((r) => setTimeout(r, 20)); // the gateway is down; do not spin
      }
    }
  });
  return { outcomes, stop: async () => ((running = false), await Promise.all(loops)) };
}

it('SIGTERM under steady keep-alive load: the gateway drains and exits by itself; every answered create exists, the rest retry safely', async () => {
  const gateway = e2e.stack.get('api-gateway');
  const load = createLoad(e2e.stack.gatewayUrl, e2e.adminToken, 8);
  // Let the load reach a steady state on its keep-alive connections (a load duration, not a readiness wait).
  await new Promise((r) => setTimeout(r, 1_500));
  await gateway.stop(15_000);
  await load.stop();

  // Exited through its own SIGTERM handler (drain, hooks, re-raise), not the SIGKILL after 15 s.
  expect(gateway.exitSignal).toBe('SIGTERM');
  const answered = [...load.outcomes].filter(([, o]) => o === 201).map(([k]) => k);
  expect(answered.length).toBeGreaterThan(0);
  const rows: Array<{ key: string; n: number }> = await ds.query(
    `SELECT key, count(*)::int AS n FROM idempotency_keys WHERE owner = 'admin' AND key = ANY($1::text[]) GROUP BY key`, [answered]);
  expect(rows.length).toBe(answered.length);

  // A client retrying its unanswered creates with the same keys gets one job each, none twice.
  gateway.start();
  await gateway.ready(60_000);
  const unanswered = [...load.outcomes].filter(([, o]) => o === 'error').map(([k]) => k);
  for (const key of unanswered) {
    const { job } = await e2e.admin.createJob(spec(e2e.tag), key);
    expect(job.id).toBeDefined();
  }
  const jobsPerKey: Array<{ n: number }> = await ds.query(
    `SELECT count(*)::int AS n FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id WHERE k.owner = 'admin' AND k.key = ANY($1::text[]) GROUP BY k.key`,
    [[...answered, ...unanswered]]);
  expect(jobsPerKey.length).toBe(answered.length + unanswered.length);
  expect(jobsPerKey.every((r) => r.n === 1)).toBe(true);
}, 120_000);
