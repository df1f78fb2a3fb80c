import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GantryClient } from '@gantry/client';
import { Stack, StackOptions, flushRedisDb } from '@gantry/stack';
import { TestSuiteName, testEnv, testSuite, uniqueTag } from '@gantry/testing';

export interface E2EStack {
  stack: Stack;
  tag: string;
  adminToken: string;
  admin: GantryClient;
  /** Scratch directory shared with the agent's processes. */
  work: string;
  clientFor(token: string): GantryClient;
  root: string;
}

/**
 * The real services as processes, with a small simulated fleet whose node ids carry this suite's
 * tag. Its own Redis db keeps other suites' "live" nodes (which have no agent) out of placement.
 */
export async function startE2EStack(opts: {
  /** The suite's entry in the test resource registry: its ports and its Redis db. */
  suite: TestSuiteName;
  simNodes?: number;
  env?: Record<string, string>;
  /** Overrides of the agent's env (e.g. GANTRY_SIM_EXECUTOR=sleep for load). */
  agentEnv?: Record<string, string>;
  /** Processes per service; see Stack. */
  replicas?: StackOptions['replicas'];
}): Promise<E2EStack> {
  const { basePort, redisUrl } = testSuite(opts.suite);
  const root = join(__dirname, '..', '..');
  const tag = uniqueTag('e2e');
  const adminToken = `e2e-admin-${uniqueTag()}`;
  const work = mkdtempSync(join(tmpdir(), 'gantry-e2e-'));
  // The suite owns its Redis db: start it empty, so nothing a previous run left (live nodes with no
  // agent behind them, running sums) leaks into this one. Redis here keeps nothing on disk anyway.
  await flushRedisDb(redisUrl);
  const stack = new Stack({
    root,
    logDir: join(root, '.cache', 'test-logs', tag),
    basePort,
    env: {
      GANTRY_ADMIN_TOKEN: adminToken,
      KAFKA_BROKERS: testEnv.kafkaBrokers.join(','),
      DATABASE_URL: testEnv.databaseUrl,
      REDIS_URL: redisUrl,
      GANTRY_HEARTBEAT_MS: '1000',
      LOG_LEVEL: 'info',
      ...opts.env,
    },
    serviceEnv: {
      'node-agent': {
        GANTRY_SIM_NODES: String(opts.simNodes ?? 3),
        GANTRY_SIM_PREFIX: tag,
        GANTRY_AGENT_ID: tag,
        GANTRY_SIM_EXECUTOR: 'process',
        GANTRY_KILL_GRACE_MS: '2000',
        GANTRY_AGENT_WORKDIR: join(work, 'agent'),
        ...opts.agentEnv,
      },
    },
    replicas: opts.replicas,
    kafkaCredentials: testEnv.kafkaCredentials,
  });
  await stack.start();
  const clientFor = (token: string) => new GantryClient({ baseUrl: stack.gatewayUrl, token, retry: { maxRetries: 2, baseDelayMs: 50, maxDelayMs: 200 } });
  return { stack, tag, adminToken, admin: clientFor(adminToken), work, clientFor, root };
}
