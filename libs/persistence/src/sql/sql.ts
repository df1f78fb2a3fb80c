import { DataSource, QueryRunner } from 'typeorm';

/** The one query shape the stores use: rows back for SELECT, INSERT/UPDATE ... RETURNING alike. */
export interface Sql {
  rows<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Runs `fn` once what was written through this Sql is committed (never after a rollback). */
  afterCommit(fn: () => void): void;
}

function onRunner(qr: QueryRunner, afterCommit: (fn: () => void) => void): Sql {
  return {
    async rows<T>(text: string, params: unknown[] = []): Promise<T[]> {
      const result = await qr.query(text, params, true);
      return (result.records ?? []) as T[];
    },
    afterCommit,
  };
}

/** Runs `fn` in one transaction (READ COMMITTED; writers rely on compare-and-set, not isolation). */
export async function inTransaction<T>(ds: DataSource, fn: (sql: Sql) => Promise<T>): Promise<T> {
  const qr = ds.createQueryRunner();
  const committed = new Set<() => void>();
  await qr.connect();
  await qr.startTransaction();
  try {
    const result = await fn(onRunner(qr, (cb) => committed.add(cb)));
    await qr.commitTransaction();
    for (const cb of committed) cb();
    return result;
  } catch (e) {
    if (qr.isTransactionActive) await qr.rollbackTransaction();
    throw e;
  } finally {
    await qr.release();
  }
}

/** Outside a transaction: each statement commits on its own, so after-commit callbacks run at once. */
export function autocommit(ds: DataSource): Sql {
  return {
    async rows<T>(text: string, params: unknown[] = []): Promise<T[]> {
      const qr = ds.createQueryRunner();
      try {
        return await onRunner(qr, (cb) => cb()).rows<T>(text, params);
      } finally {
        await qr.release();
      }
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
