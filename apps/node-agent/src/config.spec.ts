import { generateKeyPairSync } from 'node:crypto';
import { ConfigError, loadConfig } from '@gantry/platform';
import { AgentEnv } from './config';

/** What every agent must be given: the control plane's command key. */
const KEY = { GANTRY_COMMAND_PUBLIC_KEY: generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString() };

describe('AgentEnv', () => {
  it('follows the contract timeouts a user sets: heartbeat and fence are derived from them', () => {
    const c = loadConfig(AgentEnv, { ...KEY, GANTRY_NODE_SUSPECT_MS: '2000', GANTRY_NODE_DEAD_MS: '5000' });
    expect([c.GANTRY_HEARTBEAT_MS, c.GANTRY_AGENT_FENCE_MS]).toEqual([667, 3750]);
  });

  it('keeps the documented defaults when nothing is set', () => {
    const c = loadConfig(AgentEnv, KEY);
    expect([c.GANTRY_HEARTBEAT_MS, c.GANTRY_AGENT_FENCE_MS]).toEqual([5000, 30000]);
  });

  it.each([
    [
      'a fence at the dead timeout',
      { GANTRY_AGENT_FENCE_MS: '40000' },
      /GANTRY_AGENT_FENCE_MS=40000 must be shorter than GANTRY_NODE_DEAD_MS=40000 \(default\)/,
    ],
    ['a fence within a heartbeat', { GANTRY_AGENT_FENCE_MS: '4000' }, /GANTRY_AGENT_FENCE_MS=4000 must be longer than GANTRY_HEARTBEAT_MS=5000 \(default\)/],
    [
      'a dead timeout below the default fence once set explicitly',
      { GANTRY_AGENT_FENCE_MS: '30000', GANTRY_NODE_DEAD_MS: '20000' },
      /GANTRY_AGENT_FENCE_MS=30000 must be shorter than GANTRY_NODE_DEAD_MS=20000/,
    ],
  ])('refuses %s, naming the variables', (_n, env, message) => {
    expect(() => loadConfig(AgentEnv, { ...KEY, ...env })).toThrow(ConfigError);
    expect(() => loadConfig(AgentEnv, { ...KEY, ...env })).toThrow(message);
  });

  it('keeps the documented log defaults: port 9250, 64 MiB per attempt, checked every second, kept 7 days', () => {
    const c = loadConfig(AgentEnv, KEY);
    expect([c.GANTRY_AGENT_LOGS_PORT, c.GANTRY_AGENT_LOG_MAX_BYTES, c.GANTRY_AGENT_LOG_CAP_CHECK_MS, c.GANTRY_AGENT_LOG_RETENTION_MS]).toEqual([
      9250, 67108864, 1000, 604800000,
    ]);
  });

  it.each([
    ['a logs port past 65535', { GANTRY_AGENT_LOGS_PORT: '70000' }, /GANTRY_AGENT_LOGS_PORT/],
    ['a cap under 4 KiB', { GANTRY_AGENT_LOG_MAX_BYTES: '100' }, /GANTRY_AGENT_LOG_MAX_BYTES/],
    ['a cap check of 0', { GANTRY_AGENT_LOG_CAP_CHECK_MS: '0' }, /GANTRY_AGENT_LOG_CAP_CHECK_MS/],
    ['a retention of a second', { GANTRY_AGENT_LOG_RETENTION_MS: '1000' }, /GANTRY_AGENT_LOG_RETENTION_MS/],
  ])('refuses %s, naming the variable', (_n, env, message) => {
    expect(() => loadConfig(AgentEnv, { ...KEY, ...env })).toThrow(message);
  });

  it.each<[string, Record<string, string>, unknown[]]>([
    [
      'a real agent: state under its workdir, jobs left running on stop, cgroups and a runtime if found',
      { GANTRY_AGENT_WORKDIR: '/w', GANTRY_AGENT_ID: 'a1' },
      ['/w/a1/state', 'leave', 'auto', 'auto'],
    ],
    [
      'a simulated fleet: no cgroups, no runtime, its attempts stopped with it',
      { GANTRY_SIM_NODES: '50', GANTRY_AGENT_WORKDIR: '/w', GANTRY_AGENT_ID: 'a1' },
      ['/w/a1/state', 'stop', 'off', 'none'],
    ],
    [
      'what is set is kept',
      { GANTRY_AGENT_STATE_DIR: '/var/lib/g', GANTRY_AGENT_ON_STOP: 'stop', GANTRY_AGENT_CGROUPS: 'off', GANTRY_AGENT_CONTAINER_RUNTIME: 'podman' },
      ['/var/lib/g', 'stop', 'off', 'podman'],
    ],
  ])('derives the restart, cgroup and container settings: %s', (_n, env, expected) => {
    const c = loadConfig(AgentEnv, { ...KEY, ...env });
    expect([c.GANTRY_AGENT_STATE_DIR, c.GANTRY_AGENT_ON_STOP, c.GANTRY_AGENT_CGROUPS, c.GANTRY_AGENT_CONTAINER_RUNTIME]).toEqual(expected);
  });

  it.each([
    ['GANTRY_AGENT_IMAGE_POLICY', 'maybe'],
    ['GANTRY_AGENT_SPAWN', 'posix'],
    ['GANTRY_AGENT_ON_STOP', 'kill'],
    ['GANTRY_AGENT_CGROUP_ROOT', 'sys/fs/cgroup'],
    ['GANTRY_AGENT_SANDBOX', 'none'],
    ['GANTRY_AGENT_UID_RANGE', '200000'],
    ['GANTRY_AGENT_UID_RANGE', '0-100'],
    ['GANTRY_AGENT_UID_RANGE', '300-200'],
    ['GANTRY_AGENT_SANDBOX_PATHS', 'usr,/bin'],
  ])('refuses %s=%s, naming it', (name, value) => {
    expect(() => loadConfig(AgentEnv, { ...KEY, [name]: value })).toThrow(new RegExp(name));
  });

  it('sandboxes attempts by default, as uids 200000-299999 that see the system paths of the host', () => {
    const c = loadConfig(AgentEnv, KEY);
    expect([c.GANTRY_AGENT_SANDBOX, c.GANTRY_AGENT_UID_RANGE, c.GANTRY_AGENT_SANDBOX_PATHS]).toEqual([
      'bwrap',
      '200000-299999',
      '/usr,/bin,/sbin,/lib,/lib32,/lib64,/libx32,/etc,/opt,/sys',
    ]);
  });

  it.each<[string, Record<string, string>, string]>([
    ['a real agent', {}, 'gantry-node-gpu-7'],
    ['a simulated fleet', { GANTRY_SIM_NODES: '20', GANTRY_AGENT_ID: 'dev-fleet' }, 'gantry-fleet-dev-fleet'],
  ])('reads commands in the group of its own principal (ADR 0034): %s', (_n, env, group) => {
    expect(loadConfig(AgentEnv, { ...KEY, GANTRY_NODE_ID: 'gpu-7', ...env }).commandGroupId).toBe(group);
  });

  it.each<[string, Record<string, string>, RegExp | null]>([
    ['a real agent as its node, with a gateway to ask', { KAFKA_SASL_MECHANISM: 'oauthbearer', GANTRY_GATEWAY_URL: 'https://gw' }, null],
    [
      'a real agent asking where it enrolls',
      { KAFKA_SASL_MECHANISM: 'oauthbearer', GANTRY_ENROLL_URL: 'https://gw', GANTRY_ENROLL_TOKEN: 'x'.repeat(16) },
      null,
    ],
    ['a real agent on a broker without authentication', {}, null],
    [
      'a simulated fleet as its own user',
      { GANTRY_SIM_NODES: '5', KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'gantry-fleet', KAFKA_SASL_PASSWORD: 'p' },
      null,
    ],
    [
      'a real agent as a shared user',
      { KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'gantry-fleet', KAFKA_SASL_PASSWORD: 'p' },
      /KAFKA_SASL_MECHANISM=scram-sha-512: a real agent/,
    ],
    ['a real agent with no gateway to ask for tokens', { KAFKA_SASL_MECHANISM: 'oauthbearer' }, /needs GANTRY_GATEWAY_URL/],
    [
      'a simulated fleet with tokens',
      { GANTRY_SIM_NODES: '5', KAFKA_SASL_MECHANISM: 'oauthbearer', GANTRY_GATEWAY_URL: 'https://gw' },
      /oauthbearer is for a real agent/,
    ],
  ])('Kafka identity: %s', (_n, env, refused) => {
    if (refused) expect(() => loadConfig(AgentEnv, { ...KEY, ...env })).toThrow(refused);
    else expect(() => loadConfig(AgentEnv, { ...KEY, ...env })).not.toThrow();
  });

  it("refuses to start without the control plane's command key, naming it", () => {
    expect(() => loadConfig(AgentEnv, {})).toThrow(/GANTRY_COMMAND_PUBLIC_KEY/);
  });
});
