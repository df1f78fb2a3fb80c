import { Sql } from './sql';

export type TokenRole = 'user' | 'operator';

export interface ApiTokenRecord {
  id: string;
  owner: string;
  role: TokenRole;
  description: string | null;
  createdAt: Date;
  /** null: never expires. */
  expiresAt: Date | null;
  /** null: not revoked. */
  revokedAt: Date | null;
}

/** What the gateway keeps of each token in memory: the record and the hash of its secret. */
export interface ApiTokenWithSecret extends ApiTokenRecord {
  secretSha256: string;
}

const toToken = (r: Record<string, any>): ApiTokenRecord => ({
  id: r.id,
  owner: r.owner,
  role: r.role,
  description: r.description ?? null,
  createdAt: r.created_at,
  expiresAt: r.expires_at ?? null,
  revokedAt: r.revoked_at ?? null,
});

export async function insertApiToken(sql: Sql, t: Omit<ApiTokenRecord, 'revokedAt'> & { secretSha256: string }): Promise<void> {
  await sql.rows(`INSERT INTO api_tokens (id, owner, role, secret_sha256, created_at, description, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    t.id,
    t.owner,
    t.role,
    t.secretSha256,
    t.createdAt,
    t.description,
    t.expiresAt,
  ]);
}

export interface ApiTokenChanges {
  /** Pass back as `since` next time (see loadNodesChangedSince: the same horizon rule). */
  horizon: string;
  /** Every token when `since` was null; otherwise those written by transactions at or after `since`. */
  tokens: ApiTokenWithSecret[];
}

/**
 * Tokens created, revoked or changed since an earlier call, through the id of the transaction that
 * last wrote each row (`changed_xid`, indexed). A transaction still running at the earlier read is
 * at or above that read's horizon, so whatever it commits is read next time: nothing is missed.
 */
export async function loadApiTokensChangedSince(sql: Sql, since: string | null): Promise<ApiTokenChanges> {
  const rows = await sql.rows<Record<string, any> & { horizon: string }>(
    `SELECT h.horizon, t.* FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon) h
     LEFT JOIN api_tokens t ON ${since === null ? 'true' : 't.changed_xid >= $1::xid8'}`,
    since === null ? [] : [since],
  );
  return { horizon: rows[0].horizon, tokens: rows.filter((r) => r.id !== null).map((r) => ({ ...toToken(r), secretSha256: r.secret_sha256 })) };
}

/** One page of tokens in (createdAt, id) order after `after`. */
export async function listApiTokensPage(sql: Sql, after: { createdAt: Date; id: string } | null, limit: number): Promise<ApiTokenRecord[]> {
  const rows = await sql.rows(
    after === null
      ? `SELECT * FROM api_tokens ORDER BY created_at, id LIMIT $1`
      : `SELECT * FROM api_tokens WHERE (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT $1`,
    after === null ? [limit] : [limit, after.createdAt, after.id],
  );
  return rows.map(toToken);
}

/**
 * Revokes a token; idempotent (a revoked token keeps its first revocation time). Null when there
 * is no such token.
 */
export async function revokeApiToken(sql: Sql, id: string, now: Date): Promise<ApiTokenRecord | null> {
  const [row] = await sql.rows(`UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING *`, [id, now]);
  return row ? toToken(row) : null;
}
