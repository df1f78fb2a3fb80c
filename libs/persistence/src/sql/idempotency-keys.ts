import { Sql } from './sql';

/** What a key already holds: the body it was first used with and the job it created. */
export interface StoredKey {
  bodySha256: string;
  jobId: string;
}

export const keyOf = (owner: string, key: string): string => JSON.stringify([owner, key]);

/** The stored record of each existing (owner, key) pair, by `keyOf`. */
export async function findIdempotencyKeys(sql: Sql, pairs: Array<{ owner: string; key: string }>): Promise<Map<string, StoredKey>> {
  if (pairs.length === 0) return new Map();
  const rows = await sql.rows<{ owner: string; key: string; body_sha256: string; job_id: string }>(
    `SELECT k.owner, k.key, k.body_sha256, k.job_id
     FROM idempotency_keys k JOIN unnest($1::text[], $2::text[]) AS p (owner, key) ON k.owner = p.owner AND k.key = p.key`,
    [pairs.map((p) => p.owner), pairs.map((p) => p.key)],
  );
  return new Map(rows.map((r) => [keyOf(r.owner, r.key), { bodySha256: r.body_sha256, jobId: r.job_id }]));
}

/** Deletes expired keys in bounded batches; returns how many went. */
export async function sweepIdempotencyKeys(sql: Sql, now: Date, batch = 5000): Promise<number> {
  const rows = await sql.rows(`DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2) RETURNING key`, [
    now,
    batch,
  ]);
  return rows.length;
}
