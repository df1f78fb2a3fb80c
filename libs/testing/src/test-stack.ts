import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { GantryClient } from '@gantry/client';
import { ServiceProcess, Stack, StackOptions, fleetAgentEnv, fleetStack, flushRedisDb } from '@gantry/stack';
import { JOB_SCRATCH_AGENT_ENV, jobScratchDir } from './job-scratch';
import { testEnv, uniqueTag } from './test-env';
import { TestSuiteName, testSuite } from './test-resources';

export interface TestStack {
  stack: Stack;
  /** This run's tag: the fleet's node ids are `<tag>-00000`, ... unless a fleet prefix was given. */
  tag: string;
  adminToken: string;
  admin: GantryClient;
  /** Scratch directory shared with the agents' processes and their jobs (a writable path of every test agent's sandbox). */
  work: string;
  root: string;
  clientFor(token: string): GantryClient;
  /** Another agent process with a simulated fleet of its own (`<prefix>-00000`, ...), not started. */
  extraAgent(name: string, fleet: { nodes: number; prefix: string; executor?: 'process' | 'sleep' }, env?: Record<string, string>): ServiceProcess;
}

/**
 * The real services as processes, with a small simulated fleet whose node ids carry this run's tag:
 * the one harness every end-to-end suite starts its stack with. The suite's entry in the test
 * resource registry gives its ports and its Redis db, which starts empty, so nothing a previous run
 * left (live nodes with no agent behind them, running sums) leaks into this one.
 */
export async function startTestStack(opts: {
  suite: TestSuiteName;
  simNodes?: number;
  /** The stack's fleet's node ids are `<fleetPrefix>-00000`, ...; default the run's tag. */
  fleetPrefix?: string;
  /** Env of every process (timeouts, log level): heartbeats every second and LOG_LEVEL=info unless given. */
  env?: Record<string, string>;
  /** Overrides of the stack's own agent's env (e.g. GANTRY_SIM_EXECUTOR=sleep for load). */
  agentEnv?: Record<string, string>;
  /** Env of one service's processes. */
  serviceEnv?: StackOptions['serviceEnv'];
  /** Processes per service; see Stack. */
  replicas?: StackOptions['replicas'];
}): Promise<TestStack> {
  const { basePort, redisUrl } = testSuite(opts.suite);
  const root = join(__dirname, '..', '..', '..');
  const tag = uniqueTag('e2e');
  const adminToken = `e2e-admin-${randomBytes(24).toString('base64url')}`;
  // Under the scratch root every test agent lets its jobs write (ADR 0033): jobs and the suite share
  // files here. The agents' own directories inside it stay hidden from the jobs.
  const work = jobScratchDir('gantry-e2e-');
  await flushRedisDb(redisUrl);
  const stack = fleetStack({
    root,
    logDir: join(root, '.cache', 'test-logs', tag),
    basePort,
    infra: { kafkaBrokers: testEnv.kafkaBrokers.join(','), databaseUrl: testEnv.databaseUrl, redisUrl },
    adminToken,
    // The test machine is shared and often saturated: a gateway whose event loop stalls there (for
    // whole seconds at a load average of 20) is the machine's doing, not an overload the suite asked
    // for, so suites do not shed creates (load shedding has its own tests: load-shedding.spec.ts,
    // concurrency-limit.spec.ts, gateway-pressure's door test, and the overload fault of test:chaos).
    env: {
      GANTRY_HEARTBEAT_MS: '1000',
      LOG_LEVEL: 'info',
      GANTRY_SHED_EVENT_LOOP_DELAY_MS: '0',
      GANTRY_SHED_CREATE_WAIT_MS: '0',
      GANTRY_CREATE_LATENCY_TARGET_MS: '0',
      ...opts.env,
    },
    fleet: {
      nodes: opts.simNodes ?? 3,
      prefix: opts.fleetPrefix ?? tag,
      executor: 'process',
      workDir: join(work, 'agent'),
      env: { GANTRY_KILL_GRACE_MS: '2000', ...JOB_SCRATCH_AGENT_ENV, ...opts.agentEnv },
    },
    serviceEnv: opts.serviceEnv,
    replicas: opts.replicas,
    kafkaCredentials: testEnv.kafkaCredentials,
  });
  await stack.start();
  const clientFor = (token: string) => new GantryClient({ baseUrl: stack.gatewayUrl, token, retry: { maxRetries: 2, baseDelayMs: 50, maxDelayMs: 200 } });
  return {
    stack,
    tag,
    adminToken,
    admin: clientFor(adminToken),
    work,
    root,
    clientFor,
    extraAgent: (name, fleet, env = {}) =>
      stack.extra(name, 'node-agent', { ...fleetAgentEnv({ executor: 'process', ...fleet, workDir: join(work, name) }), ...JOB_SCRATCH_AGENT_ENV, ...env }),
  };
}
