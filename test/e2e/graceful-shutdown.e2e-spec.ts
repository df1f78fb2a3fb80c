import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { TestStack, openDataSource, startTestStack } from '@gantry/testing';

let e2e: TestStack;
let ds: DataSource;
beforeAll(async () => {
  e2e = await startTestStack({ suite: 'graceful-shutdown', agentEnv: { GANTRY_SIM_EXECUTOR: 'sleep' } });
  ds = await openDataSource();
}, 120_000);
afterAll(async () => {
  await e2e?.stack.stop();
  await ds?.destroy();
});

const spec = (tag: string) => ({ name: `drain-${tag}`, image: 'none', command: ['sleep'], env: { SIM_DURATION_MS: '200' } });

/** Creates over keep-alive connections, each with its own key, until stopped; records how each ended. */
function createLoad(gatewayUrl: string, token: string, workers: number) {
  const outcomes = new Map<string, { status: number; jobId?: string } | 'error'>();
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
        const body = await res.text();
        outcomes.set(key, { status: res.status, jobId: res.status === 201 ? (JSON.parse(body) as { id: string }).id : undefined });
      } catch {
        outcomes.set(key, 'error'); // connection refused or closed: the client's to retry with the same key
        await new Promise((r) => setTimeout(r, 20)); // the gateway is down; do not spin
      }
    }
  });
  return { outcomes, stop: async () => ((running = false), await Promise.all(loops)) };
}

it('SIGTERM under steady keep-alive load: the gateway drains and exits by itself; every answered create exists, and retries with the same keys give one job per key', async () => {
  const gateway = e2e.stack.get('api-gateway');
  const load = createLoad(e2e.stack.gatewayUrl, e2e.adminToken, 8);
  // Let the load reach a steady state on its keep-alive connections (a load duration, not a readiness wait).
  await new Promise((r) => setTimeout(r, 1_500));
  await gateway.stop(15_000);
  await load.stop();

  // Exited through its own SIGTERM handler (drain, hooks, re-raise), not the SIGKILL after 15 s.
  expect(gateway.exitSignal).toBe('SIGTERM');
  const answered = new Map([...load.outcomes].flatMap(([key, o]) => (o !== 'error' && o.status === 201 ? [[key, o.jobId!] as const] : [])));
  expect(answered.size).toBeGreaterThan(0);
  const stored: Array<{ id: string }> = await ds.query(`SELECT id FROM jobs WHERE id = ANY($1::uuid[])`, [[...answered.values()]]);
  expect(stored.length).toBe(answered.size);

  // The client retries every create with its key, answered or not (it may have missed the answer):
  // an answered one replays the job it was given, the others get one job each.
  gateway.start();
  await gateway.ready(60_000);
  const jobOfKey = new Map<string, string>();
  const keys = [...load.outcomes.keys()];
  for (let i = 0; i < keys.length; i += 8) {
    await Promise.all(
      keys.slice(i, i + 8).map(async (key) => {
        const { job, replayed } = await e2e.admin.createJob(spec(e2e.tag), key);
        if (answered.has(key)) expect({ id: job.id, replayed }).toEqual({ id: answered.get(key), replayed: true });
        jobOfKey.set(key, job.id);
      }),
    );
  }
  // One job per key, none twice, none without a key: the jobs of this test are exactly those.
  const ids = new Set(jobOfKey.values());
  expect(ids.size).toBe(keys.length);
  const jobs: Array<{ id: string }> = await ds.query(`SELECT id FROM jobs WHERE owner = 'admin' AND name = $1`, [`drain-${e2e.tag}`]);
  expect(new Set(jobs.map((j) => j.id))).toEqual(ids);
}, 120_000);
