import 'reflect-metadata';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { createDataSource } from '@gantry/persistence';
import { testEnv } from './test-env';

export async function openDataSource(): Promise<DataSource> {
  const ds = createDataSource({ url: testEnv.databaseUrl, poolSize: 20, applicationName: 'gantry-test' });
  await ds.initialize();
  return ds;
}

export async function openRedis(): Promise<Redis> {
  const redis = new Redis(testEnv.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 3 });
  await redis.connect();
  return redis;
}

/** A logger that keeps quiet but remembers, for tests that assert on warnings. */
export function silentLogger() {
  const lines: Array<{ level: string; msg: string; obj: object }> = [];
  const at = (level: string) => (obj: object, msg: string) => void lines.push({ level, msg, obj });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
