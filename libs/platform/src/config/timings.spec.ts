import { defaultDetectorIntervalMs, defaultFenceMs, defaultHeartbeatMs, defaultIngestStallMs, defaultPhantomGraceMs, timingProblems } from './timings';
import { ConfigError, loadConfig } from './load-config';
import { ServiceEnv } from './env';

const at = (hb: number, suspect: number, dead: number, fence?: number) => ({
  GANTRY_HEARTBEAT_MS: hb,
  GANTRY_NODE_SUSPECT_MS: suspect,
  GANTRY_NODE_DEAD_MS: dead,
  GANTRY_AGENT_FENCE_MS: fence,
});

describe('timing defaults', () => {
  it.each([
    ['heartbeat from suspect', defaultHeartbeatMs, 15000, 5000],
    ['heartbeat from a short suspect', defaultHeartbeatMs, 2000, 667],
    ['heartbeat never under 100 ms', defaultHeartbeatMs, 150, 100],
    ['fence from dead', defaultFenceMs, 40000, 30000],
    ['fence from a short dead', defaultFenceMs, 5000, 3750],
    ['phantom grace from a slow heartbeat', defaultPhantomGraceMs, 20000, 60000],
    ['phantom grace at least 15 s', defaultPhantomGraceMs, 1000, 15000],
    ['ingest stall from a slow heartbeat', defaultIngestStallMs, 20000, 40000],
    ['ingest stall at least 10 s', defaultIngestStallMs, 5000, 10000],
    ['detector round at the default dead timeout', defaultDetectorIntervalMs, 40000, 2000],
    ['detector round from a long dead timeout', defaultDetectorIntervalMs, 240000, 12000],
    ['detector round at least 2 s', defaultDetectorIntervalMs, 5000, 2000],
  ])('%s', (_name, derive, from, expected) => expect(derive(from)).toBe(expected));
});

describe('timingProblems', () => {
  it.each([
    ['the defaults', at(5000, 15000, 40000, 30000), []],
    ['only the contract timeouts set, defaults derived', at(667, 2000, 5000, 3750), []],
    ['heartbeat not under suspect', at(3000, 3000, 40000), [/GANTRY_HEARTBEAT_MS=3000 must be shorter than GANTRY_NODE_SUSPECT_MS=3000/]],
    ['suspect not under dead', at(1000, 40000, 40000), [/GANTRY_NODE_SUSPECT_MS=40000 must be shorter than GANTRY_NODE_DEAD_MS=40000/]],
    [
      'dead within a heartbeat of suspect',
      at(5000, 15000, 19000),
      [/GANTRY_NODE_DEAD_MS=19000 must exceed GANTRY_NODE_SUSPECT_MS=15000 by more than GANTRY_HEARTBEAT_MS=5000/],
    ],
    ['fence not under dead', at(5000, 15000, 40000, 40000), [/GANTRY_AGENT_FENCE_MS=40000 must be shorter than GANTRY_NODE_DEAD_MS=40000/]],
    ['fence not over a heartbeat', at(5000, 15000, 40000, 5000), [/GANTRY_AGENT_FENCE_MS=5000 must be longer than GANTRY_HEARTBEAT_MS=5000/]],
    ['two rules broken', at(50000, 15000, 10000), [/GANTRY_HEARTBEAT_MS/, /GANTRY_NODE_SUSPECT_MS=15000 must be shorter/]],
  ])('%s', (_name, timings, expected) => {
    const problems = timingProblems(timings);
    expect(problems).toHaveLength(expected.length);
    expected.forEach((re, i) => expect(problems[i]).toMatch(re));
  });

  it('marks the values the environment did not set as defaults', () => {
    expect(timingProblems(at(5000, 15000, 10000), new Set(['GANTRY_NODE_DEAD_MS']))[0]).toBe(
      'GANTRY_NODE_SUSPECT_MS=15000 (default) must be shorter than GANTRY_NODE_DEAD_MS=10000: a node is DEGRADED before it is dead',
    );
  });
});

describe('loadConfig with the timing rules', () => {
  it('derives the heartbeat from the suspect timeout the user set', () => {
    const c = loadConfig(ServiceEnv, { GANTRY_NODE_SUSPECT_MS: '2000', GANTRY_NODE_DEAD_MS: '5000' });
    expect([c.GANTRY_HEARTBEAT_MS, c.GANTRY_NODE_SUSPECT_MS, c.GANTRY_NODE_DEAD_MS]).toEqual([667, 2000, 5000]);
  });

  it('keeps a heartbeat the user set, and the contract defaults when nothing is set', () => {
    expect(loadConfig(ServiceEnv, { GANTRY_NODE_SUSPECT_MS: '2000', GANTRY_HEARTBEAT_MS: '500' }).GANTRY_HEARTBEAT_MS).toBe(500);
    const d = loadConfig(ServiceEnv, {});
    expect([d.GANTRY_HEARTBEAT_MS, d.GANTRY_NODE_SUSPECT_MS, d.GANTRY_NODE_DEAD_MS]).toEqual([5000, 15000, 40000]);
  });

  it('refuses timings that contradict each other, naming the variables', () => {
    expect(() => loadConfig(ServiceEnv, { GANTRY_NODE_DEAD_MS: '10000' })).toThrow(ConfigError);
    expect(() => loadConfig(ServiceEnv, { GANTRY_NODE_DEAD_MS: '10000' })).toThrow(
      /GANTRY_NODE_SUSPECT_MS=15000 \(default\) must be shorter than GANTRY_NODE_DEAD_MS=10000/,
    );
  });
});
