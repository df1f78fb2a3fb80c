import { loadConfig } from '@gantry/platform';
import { GatewayEnv } from './config';

const base = { GANTRY_ADMIN_TOKEN: 'a-token-of-16-chars-or-more' };

describe('GatewayEnv', () => {
  it('takes the door\'s defaults', () => {
    const c = loadConfig(GatewayEnv, base);
    expect([c.GANTRY_CREATE_LATENCY_TARGET_MS, c.GANTRY_CREATE_INFLIGHT_MIN, c.GANTRY_CREATE_INFLIGHT_MAX]).toEqual([200, 64, 1024]);
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ['a door whose max is below its min', { GANTRY_CREATE_INFLIGHT_MIN: '100', GANTRY_CREATE_INFLIGHT_MAX: '50' }, /GANTRY_CREATE_INFLIGHT_MAX must be at least GANTRY_CREATE_INFLIGHT_MIN/],
    ['retention shorter than the idempotency TTL', { GANTRY_IDEMPOTENCY_TTL_MS: '100000', GANTRY_JOB_RETENTION_MS: '50000' }, /GANTRY_JOB_RETENTION_MS must be at least GANTRY_IDEMPOTENCY_TTL_MS/],
  ])('refuses %s, naming the variable', (_n, env, message) => {
    expect(() => loadConfig(GatewayEnv, { ...base, ...env })).toThrow(message);
  });
});
