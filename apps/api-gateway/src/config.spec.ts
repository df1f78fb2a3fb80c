import { loadConfig } from '@gantry/platform';
import { GatewayEnv } from './config';

const base = { GANTRY_ADMIN_TOKEN: 'an-admin-token-of-32-characters!', GANTRY_CURSOR_SECRET: 'a-cursor-secret-of-32-characters' };

describe('GatewayEnv', () => {
  it("takes the door's defaults", () => {
    const c = loadConfig(GatewayEnv, base);
    expect([c.GANTRY_CREATE_LATENCY_TARGET_MS, c.GANTRY_CREATE_INFLIGHT_MIN, c.GANTRY_CREATE_INFLIGHT_MAX]).toEqual([200, 64, 1024]);
  });

  it('takes the session defaults: 32 streams per token, 20 unauthenticated requests a second per address', () => {
    const c = loadConfig(GatewayEnv, base);
    expect([c.GANTRY_STREAMS_PER_TOKEN, c.GANTRY_ANON_RATE_LIMIT_RPS]).toEqual([32, 20]);
  });

  it.each<[string, Record<string, string | undefined>, RegExp]>([
    [
      'a door whose max is below its min',
      { GANTRY_CREATE_INFLIGHT_MIN: '100', GANTRY_CREATE_INFLIGHT_MAX: '50' },
      /GANTRY_CREATE_INFLIGHT_MAX must be at least GANTRY_CREATE_INFLIGHT_MIN/,
    ],
    [
      'retention shorter than the idempotency TTL',
      { GANTRY_IDEMPOTENCY_TTL_MS: '100000', GANTRY_JOB_RETENTION_MS: '50000' },
      /GANTRY_JOB_RETENTION_MS must be at least GANTRY_IDEMPOTENCY_TTL_MS/,
    ],
    [
      'a 31-character admin token',
      { GANTRY_ADMIN_TOKEN: 'x'.repeat(31) },
      /GANTRY_ADMIN_TOKEN=<31 characters, not shown>: GANTRY_ADMIN_TOKEN must be at least 32 characters/,
    ],
    ['no admin token', { GANTRY_ADMIN_TOKEN: undefined }, /GANTRY_ADMIN_TOKEN=null: .*GANTRY_ADMIN_TOKEN is required/],
    ['no cursor secret', { GANTRY_CURSOR_SECRET: undefined }, /GANTRY_CURSOR_SECRET=null: .*GANTRY_CURSOR_SECRET is required/],
    ['an empty cursor secret (empty counts as unset)', { GANTRY_CURSOR_SECRET: '' }, /GANTRY_CURSOR_SECRET is required/],
    [
      'a 31-character cursor secret',
      { GANTRY_CURSOR_SECRET: 'c'.repeat(31) },
      /GANTRY_CURSOR_SECRET=<31 characters, not shown>: GANTRY_CURSOR_SECRET must be at least 32 characters/,
    ],
    [
      'a cursor secret that is the admin token',
      { GANTRY_CURSOR_SECRET: base.GANTRY_ADMIN_TOKEN },
      /GANTRY_CURSOR_SECRET must not be the same as GANTRY_ADMIN_TOKEN/,
    ],
    [
      'a cursor secret that is the node-credential secret',
      { GANTRY_NODE_CREDENTIAL_SECRET: base.GANTRY_CURSOR_SECRET },
      /GANTRY_CURSOR_SECRET must not be the same as GANTRY_NODE_CREDENTIAL_SECRET/,
    ],
    ['no streams per token', { GANTRY_STREAMS_PER_TOKEN: '0' }, /GANTRY_STREAMS_PER_TOKEN/],
    ['no unauthenticated requests at all', { GANTRY_ANON_RATE_LIMIT_RPS: '0' }, /GANTRY_ANON_RATE_LIMIT_RPS/],
    ['a fair-share half-life of 0', { GANTRY_FAIRSHARE_HALF_LIFE_HOURS: '0' }, /GANTRY_FAIRSHARE_HALF_LIFE_HOURS must be more than 0/],
    ['a fair-share half-life that is not a number', { GANTRY_FAIRSHARE_HALF_LIFE_HOURS: 'week' }, /GANTRY_FAIRSHARE_HALF_LIFE_HOURS must be a number of hours/],
    ['a backfill mode the scheduler does not know', { GANTRY_SCHEDULER_BACKFILL: 'greedy' }, /GANTRY_SCHEDULER_BACKFILL must be one of runtime, strict/],
  ])('refuses %s, naming the variable', (_n, env, message) => {
    expect(() => loadConfig(GatewayEnv, { ...base, ...env })).toThrow(message);
  });

  it('never shows a secret it refuses', () => {
    const secret = 'a-secret-that-is-too-short';
    expect(() => loadConfig(GatewayEnv, { ...base, GANTRY_ADMIN_TOKEN: secret })).not.toThrow(secret);
  });
});
