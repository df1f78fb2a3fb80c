import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryConfig } from 'pg';
import { DataSource, QueryRunner } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * A fixed statement of a hot path, prepared once per connection under a name derived from its text:
 * Postgres parses and plans it once (after five runs, a generic plan), not on every call. Planning
 * the batch statements (a dozen CTEs over unnest) took longer than running them.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

export function prepared(text: string): PreparedStatement {
  return { name: `gantry_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`, text };
}

/** The one query shape the stores use: rows back for SELECT, INSERT/UPDATE ... RETURNING alike. */
export interface Sql {
  rows<T = Record<string, unknown>>(query: string | PreparedStatement, params?: unknown[]): Promise<T[]>;
  /** Runs `fn` once what was written through this Sql is committed (never after a rollback). */
  afterCommit(fn: () => void): void;
}

function config(query: string | PreparedStatement, params: unknown[]): QueryConfig {
  return typeof query === 'string' ? { text: query, values: params } : { name: query.name, text: query.text, values: params };
}

/** Straight to node-postgres (TypeORM's query() adds logging hooks and result wrapping on every call). */
function onClient(client: PoolClient, afterCommit: (fn: () => void) => void): Sql {
  return {
    async rows<T>(query: string | PreparedStatement, params: unknown[] = []): Promise<T[]> {
      return (await client.query(config(query, params))).rows as T[];
    },
    afterCommit,
  };
}

/** Runs `fn` in one transaction (READ COMMITTED; writers rely on compare-and-set, not isolation). */
export async function inTransaction<T>(ds: DataSource, fn: (sql: Sql) => Promise<T>): Promise<T> {
  const qr: QueryRunner = ds.createQueryRunner();
  const committed = new Set<() => void>();
  const client = (await qr.connect()) as PoolClient;
  await qr.startTransaction();
  try {
    const result = await fn(onClient(client, (cb) => committed.add(cb)));
    await qr.commitTransaction();
    for (const cb of committed) cb();
    return result;
  } catch (e) {
    if (hasSqlState(e)) {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
    } else {
      // The client gave up (query_timeout) or lost the connection: it may still receive an answer
      // meant for the failed query, so it is destroyed, not reused; the server rolls back.
      await (qr as unknown as { releasePostgresConnection(err: unknown): Promise<void> }).releasePostgresConnection(e);
    }
    throw e;
  } finally {
    await qr.release();
  }
}

/** Whether Postgres itself raised the error (it carries a SQLSTATE), as opposed to the client or the network. */
function hasSqlState(e: unknown): boolean {
  const code = (e as { code?: unknown; driverError?: { code?: unknown } })?.driverError?.code ?? (e as { code?: unknown })?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** Outside a transaction: each statement commits on its own, so after-commit callbacks run at once. */
export function autocommit(ds: DataSource): Sql {
  const pool = (ds.driver as PostgresDriver).master as Pool;
  return {
    async rows<T>(query: string | PreparedStatement, params: unknown[] = []): Promise<T[]> {
      return (await pool.query(config(query, params))).rows as T[];
    },
    afterCommit: (cb) => cb(),
  };
}

/** Thrown when a compare-and-set lost a race; the caller reloads and decides again. */
export class ConcurrentUpdateError extends Error {
  constructor(what: string) {
    super(`concurrent update of ${what}`);
    this.name = 'ConcurrentUpdateError';
  }
}

/**
 * Whether a database error is about the data itself (SQLSTATE class 22, data exception, or 23,
 * integrity violation): retrying the same message can never succeed, so it is dead-lettered.
 */
export function isPermanentDataError(e: unknown): boolean {
  const code = (e as { code?: unknown; driverError?: { code?: unknown } })?.driverError?.code ?? (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

/** A text[] literal: unnest cannot take a ragged 2-D array, so each row's array travels as one. */
export function textArrayLiteral(items: readonly string[]): string {
  return `{${items.map((s) => `"${s.replace(/(["\\])/g, '\\$1')}"`).join(',')}}`;
}

/** A Postgres int[] literal: one text parameter per row, whatever the row's length (unnest takes no ragged arrays). */
export function intArrayLiteral(xs: readonly number[]): string {
  return `{${xs.map((x) => Math.trunc(x)).join(',')}}`;
}
