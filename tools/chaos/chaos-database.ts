import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { runCommand } from './run-command';

function chaosDbName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!/^gantry_chaos[a-z0-9_]*$/.test(name)) throw new Error(`refusing to drop database "${name}": the chaos run only recreates gantry_chaos* databases`);
  return name;
}

/** Drops the chaos database, creates it again and applies every migration: each run starts empty. */
export async function recreateChaosDatabase(root: string, url: string): Promise<void> {
  const name = chaosDbName(url);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const c = new Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await c.end();
  }
  await runCommand(process.execPath, [join(root, 'dist/tools/infra/ensure-databases.js'), url], { cwd: root });
  await runCommand(process.execPath, [join(root, 'dist/libs/persistence/src/cli/migrate.js')], { cwd: root, env: { DATABASE_URL: url } });
}

/** One short-lived connection for a read. */
export async function withDb<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url, application_name: 'gantry-chaos' });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * FLUSHDB of the run's own logical db. The machine's redis-server is shared, so the "Redis restart"
 * fault is this: Gantry's Redis keeps nothing on disk, and a restarted empty Redis looks to Gantry
 * exactly like a flushed one (plus a short refused-connection window that this does not reproduce).
 */
export async function flushRedisDb(url: string): Promise<void> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await r.connect();
  try {
    await r.flushdb();
  } finally {
    r.disconnect();
  }
}
