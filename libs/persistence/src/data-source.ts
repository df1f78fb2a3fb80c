import { DataSource } from 'typeorm';
import { MIGRATIONS } from './migrations';

export interface DataSourceOptions {
  url: string;
  /** Pool size per process. */
  poolSize?: number;
  applicationName?: string;
  /**
   * Longest a statement may run, ms (Postgres's statement_timeout; it also bounds lock waits). The
   * client gives up on a server that stopped answering this much plus QUERY_TIMEOUT_MARGIN_MS
   * later. Unset: no limit (migrations).
   */
  statementTimeoutMs?: number;
  /** Longest wait for a pooled connection (or a new one to open), ms. Unset: no limit. */
  acquireTimeoutMs?: number;
}

/** How much longer than statement_timeout the client waits for an answer before it gives up on the connection. */
const QUERY_TIMEOUT_MARGIN_MS = 5_000;
/** A transaction left idle this long is ended by the server (a leaked one would hold its locks). */
const IDLE_IN_TRANSACTION_MS = 60_000;

/** The one way services reach Postgres. Schema changes only through migrations, never `synchronize`. */
export function createDataSource(opts: DataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: opts.url,
    migrations: MIGRATIONS,
    migrationsTableName: 'gantry_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: {
      max: opts.poolSize ?? 10,
      application_name: opts.applicationName ?? 'gantry',
      keepAlive: true,
      ...(opts.statementTimeoutMs !== undefined && {
        statement_timeout: opts.statementTimeoutMs,
        query_timeout: opts.statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
        idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
      }),
      ...(opts.acquireTimeoutMs !== undefined && { connectionTimeoutMillis: opts.acquireTimeoutMs }),
    },
  });
}
