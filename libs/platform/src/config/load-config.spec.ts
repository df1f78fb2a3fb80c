import { ConfigError, loadConfig } from './load-config';
import { StatefulServiceEnv } from './env';

describe('loadConfig', () => {
  it('applies defaults and converts numbers', () => {
    const c = loadConfig(StatefulServiceEnv, { GANTRY_HTTP_PORT: '9000' });
    expect(c.GANTRY_HTTP_PORT).toBe(9000);
    expect(c.REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(c.kafkaBrokers).toEqual(['127.0.0.1:9092']);
  });

  it('names every bad variable', () => {
    try {
      loadConfig(StatefulServiceEnv, { GANTRY_HTTP_PORT: 'eighty', DATABASE_URL: 'mysql://x', KAFKA_BROKERS: 'a:1,,b' });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const msg = (e as Error).message;
      expect(msg).toContain('GANTRY_HTTP_PORT="eighty"');
      expect(msg).toContain('DATABASE_URL="mysql://x"');
      expect(msg).toContain('KAFKA_BROKERS');
    }
  });

  it.each([
    ['GANTRY_NODE_CREDENTIAL_SECRET', 'too-short-secret'],
    ['GANTRY_COMMAND_SIGNING_KEY', 'not-a-pem-but-a-secret'],
  ])('names a bad secret (%s) without showing its value', (name, value) => {
    expect(() => loadConfig(StatefulServiceEnv, { [name]: value })).toThrow(`${name}=<${value.length} characters, not shown>`);
    expect(() => loadConfig(StatefulServiceEnv, { [name]: value })).not.toThrow(value);
  });
});
