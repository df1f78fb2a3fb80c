/**
 * Where tests find their infrastructure. `npm test` (tools/ci/test.sh) exports these; the defaults
 * match what it starts: a broker on 29092, the gantry_test database, its own redis-server on 26379
 * (logical db 1 for the integration tests). GANTRY_TEST_PORT_OFFSET moves all of it (and every
 * suite's service ports, see test-resources.ts), so a second checkout can run its suite at the
 * same time without touching the first's.
 */
import { KafkaCredentials, kafkaCredentialsFromEnv, kafkaSecurityFor } from '@gantry/stack';

const portOffset = Number(process.env.GANTRY_TEST_PORT_OFFSET ?? 0) || 0;
let credentials: KafkaCredentials | null | undefined;

export const testEnv = {
  portOffset,
  databaseUrl: process.env.DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/gantry_test${portOffset ? `_${portOffset}` : ''}`,
  redisUrl: process.env.REDIS_URL ?? `redis://127.0.0.1:${26379 + portOffset}/1`,
  kafkaBrokers: (process.env.KAFKA_BROKERS ?? `127.0.0.1:${29092 + portOffset}`).split(','),
  /** The test broker's users (npm test exports GANTRY_KAFKA_CREDENTIALS_FILE): services run as their own. */
  get kafkaCredentials(): KafkaCredentials | null {
    if (credentials === undefined) credentials = kafkaCredentialsFromEnv();
    return credentials;
  },
  /** How an in-process test client connects: as the broker's admin, or as `role`. */
  kafkaSecurity(role = 'admin') {
    return kafkaSecurityFor(this.kafkaCredentials, role);
  },
};

/**
 * The Redis database a suite of real processes uses: a logical db of its own, so nodes that
 * integration tests marked live (with no agent behind them) are never candidates for its jobs.
 */
export function isolatedRedisUrl(db: number): string {
  const url = new URL(testEnv.redisUrl);
  url.pathname = `/${db}`;
  return url.toString();
}

/** A short random tag so tests never collide on node ids, consumer groups or owners. */
export function uniqueTag(prefix = 't'): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
