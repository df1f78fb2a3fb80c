import { Sql } from './sql';

export type KeyClaim =
  /** This request owns the key: create the job in the same transaction. */
  | { kind: 'claimed' }
  /** The key was used before (and committed): compare bodies. */
  | { kind: 'existing'; bodySha256: string; jobId: string };

/**
 * Claims (owner, key) through the primary key. A concurrent request with the same key blocks on
 * the unique index until the first commits, then sees its row: exactly one job per key, however
 * many requests race. An expired key is taken over as if new.
 */
export async function claimIdempotencyKey(
  sql: Sql, owner: string, key: string, bodySha256: string, jobId: string, now: Date, ttlMs: number,
): Promise<KeyClaim> {
  const claimed = await sql.rows(
    `INSERT INTO idempotency_keys (owner, key, body_sha256, job_id, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (owner, key) DO UPDATE SET body_sha256 = EXCLUDED.body_sha256, job_id = EXCLUDED.job_id,
       created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
     WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
     RETURNING key`,
    [owner, key, bodySha256, jobId, now, new Date(now.getTime() + ttlMs)],
  );
  if (claimed.length === 1) return { kind: 'claimed' };
  const [row] = await sql.rows<{ body_sha256: string; job_id: string }>(
    `SELECT body_sha256, job_id FROM idempotency_keys WHERE owner = $1 AND key = $2`,
    [owner, key],
  );
  return { kind: 'existing', bodySha256: row.body_sha256, jobId: row.job_id };
}

/** Deletes expired keys in bounded batches; returns how many went. */
export async function sweepIdempotencyKeys(sql: Sql, now: Date, batch = 5000): Promise<number> {
  const rows = await sql.rows(
    `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2) RETURNING key`,
    [now, batch],
  );
  return rows.length;
}
