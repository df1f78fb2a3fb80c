import { isolatedRedisUrl, testEnv } from './test-env';

/**
 * Every suite that runs real processes or owns a Redis db, in one table: no two suites share a
 * port range or a Redis db (the test redis-server has 64). A suite's services take `basePort` and
 * the ports after it (five, plus extra replicas and agents: give each range 20). Benches and
 * test:chaos have their own settings and ranges (18400, 18800-18899, 18900) outside these.
 */
const SUITES = {
  // integration suites that read a whole Redis keyspace
  'reconciler-failure-handling': { basePort: 0, redisDb: 7 },
  'reconciler-node-events': { basePort: 0, redisDb: 10 },
  'persistence-gateway-lifecycles': { basePort: 0, redisDb: 42 },
  // e2e suites
  'job-lifecycle': { basePort: 18180, redisDb: 2 },
  'api-promises': { basePort: 18280, redisDb: 3 },
  nodes: { basePort: 18380, redisDb: 4 },
  'node-failure': { basePort: 18480, redisDb: 8 },
  'graceful-shutdown': { basePort: 18580, redisDb: 15 },
  'scheduling-stress': { basePort: 18600, redisDb: 9 },
  'scheduling-policy': { basePort: 18620, redisDb: 16 },
  // Two real agents (the stack's and one extra) with fake 8-GPU inventories.
  'gpu-devices': { basePort: 18640, redisDb: 21 },
  // A real agent killed with kill -9 and restarted.
  'agent-restart': { basePort: 18240, redisDb: 45 },
  'partition-hold': { basePort: 18700, redisDb: 11 },
  'control-plane-faults': { basePort: 18720, redisDb: 12 },
  // restarts the test broker itself (suites run one at a time)
  'broker-restart': { basePort: 18300, redisDb: 19 },
  'cli-and-streams': { basePort: 18740, redisDb: 17 },
  'gateway-pressure': { basePort: 18660, redisDb: 40 },
  'gateway-lifecycles': { basePort: 18680, redisDb: 41 },
  // The stack, then four more agents at basePort + 10..13.
  'agent-trust': { basePort: 18760, redisDb: 18 },
  // the console's browser tests (its 5,000-node fleet agent takes the next port after the stack's)
  console: { basePort: 18780, redisDb: 20 },
  // One real agent serving logs (its log port at basePort + 15).
  'job-logs': { basePort: 18260, redisDb: 30 },
  // issue 17: retry policy, dependencies, explain
  'retry-policy': { basePort: 18200, redisDb: 22 },
  'job-dependencies': { basePort: 18220, redisDb: 23 },
  explain: { basePort: 18400, redisDb: 24 },
  drain: { basePort: 18420, redisDb: 25 },
  'job-arrays': { basePort: 18320, redisDb: 26 },
  preemption: { basePort: 18440, redisDb: 28 },
  // issue 40: a job is a tenant, a node is trusted for what was declared, sessions
  sessions: { basePort: 18340, redisDb: 31 },
  'node-inventory': { basePort: 18360, redisDb: 32 },
  'start-timeout': { basePort: 18460, redisDb: 33 },
  'agent-delivery': { basePort: 18500, redisDb: 34 },
  'tenant-sandbox': { basePort: 18520, redisDb: 35 },
  // issue 41: decayed fair share in the queue view and explain
  'fair-share': { basePort: 18560, redisDb: 52 },
  // issue 41: the usage ledger
  usage: { basePort: 18540, redisDb: 50 },
} as const;

export type TestSuiteName = keyof typeof SUITES;

export interface TestSuiteResources {
  /** First service port, moved by GANTRY_TEST_PORT_OFFSET. */
  basePort: number;
  redisDb: number;
  redisUrl: string;
}

export function testSuite(name: TestSuiteName): TestSuiteResources {
  const s = SUITES[name];
  return { basePort: s.basePort + testEnv.portOffset, redisDb: s.redisDb, redisUrl: isolatedRedisUrl(s.redisDb) };
}

/** For the registry's own test: every entry, as written. */
export const TEST_SUITES: Readonly<Record<string, { basePort: number; redisDb: number }>> = SUITES;
