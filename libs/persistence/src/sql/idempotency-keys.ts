import { Sql } from './sql';

export interface KeyClaimRequest {
  owner: string;
  key: string;
  bodySha256: string;
  /** The job this request would create. */
  jobId: string;
}

/** What a key already holds: the body it was first used with and the job it created. */
export interface StoredKey {
  bodySha256: string;
  jobId: string;
}

export const keyOf = (owner: string, key: string): string => JSON.stringify([owner, key]);

/**
 * Claims (owner, key) pairs through the primary key and returns the ones this transaction now owns
 * (as `keyOf` strings). A concurrent transaction claiming the same key blocks on the unique index
 * until the first commits, then sees its row: exactly one job per key, however many requests race.
 * Rows are inserted in (owner, key) order so that two batches never wait on each other in a cycle.
 * An expired key is taken over as if new. The pairs must be distinct.
 */
export async function claimIdempotencyKeys(sql: Sql, claims: KeyClaimRequest[], now: Date, ttlMs: number): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const sorted = [...claims].sort((a, b) => (a.owner === b.owner ? cmp(a.key, b.key) : cmp(a.owner, b.owner)));
  const rows = await sql.rows<{ owner: string; key: string }>(
    `INSERT INTO idempotency_keys (owner, key, body_sha256, job_id, created_at, expires_at)
     SELECT c.owner, c.key, c.body_sha256, c.job_id, $5::timestamptz, $6::timestamptz
     FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[]) WITH ORDINALITY AS c (owner, key, body_sha256, job_id, n)
     ORDER BY c.n
     ON CONFLICT (owner, key) DO UPDATE SET body_sha256 = EXCLUDED.body_sha256, job_id = EXCLUDED.job_id,
       created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
     WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
     RETURNING owner, key`,
    [sorted.map((c) => c.owner), sorted.map((c) => c.key), sorted.map((c) => c.bodySha256), sorted.map((c) => c.jobId), now, new Date(now.getTime() + ttlMs)],
  );
  return new Set(rows.map((r) => keyOf(r.owner, r.key)));
}

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

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Deletes expired keys in bounded batches; returns how many went. */
export async function sweepIdempotencyKeys(sql: Sql, now: Date, batch = 5000): Promise<number> {
  const rows = await sql.rows(
    `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2) RETURNING key`,
    [now, batch],
  );
  return rows.length;
}
